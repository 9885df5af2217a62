// Package adkv2 makes memvault the persistence layer of Google's Agent
// Development Kit for Go, major version 2 (google.golang.org/adk/v2):
// SessionService is an ADK
// session.Service on any memvault store — SQLite by default, PostgreSQL in
// production, encrypted when the store is.
//
// # Layout
//
// Everything lives under one namespace prefix of the store (Options.Prefix,
// "adk" by default), then the app name:
//
//	<prefix> <app> sessions <user>               key: session id       the session: its own state, revision, last update
//	<prefix> <app> sessions <user> <session id>  key: position.token   one event (ADK's JSON) per item
//	<prefix> <app> app-state                     key: "state"          state keys written as "app:…"
//	<prefix> <app> user-state <user>             key: "state"          state keys written as "user:…"
//	<prefix> <app> memory <user> <session id>    key: event id         memories (MemoryService)
//
// Labels are escaped ("." and "%" become "%2E" and "%25"), so any app name
// or user id is a valid namespace. With an encrypting store each session
// item and each event is one ciphertext bound to its namespace and key: one
// copied under another user, app or session does not decrypt.
//
// An event's key is its position in the session (from 1, zero-padded to 20
// digits, so keys sort in order) and a random token; each event names the
// token of the one before it and the session item the token of the last,
// and readers follow that chain. An append that lost its race removes its
// event again; one cut short (its process died) leaves an event no chain
// names, which nothing reads and which goes with the session.
//
// # Per-subject keys and erasure
//
// Everything of a user — sessions with their events and state, her
// "user:" state, her memories — lives under a namespace whose label after
// a prefix of SubjectNamespaces is the user id. With those prefixes as
// memvault's per-subject namespace prefixes (with the default prefix:
// MEMVAULT_SUBJECT_NAMESPACE=adk.*.sessions,adk.*.user-state,adk.*.memory),
// each user's data is sealed under her own data keys, and `memvault forget`
// of Subject(user) (the escaped user id) destroys them and deletes all of
// it, in every app. "app:" state is the app's, under the master key.
//
// Versions before this layout kept user state in one item per user under
// <prefix> <app> user-state, keyed by user id, under the master key. It is
// still read, and moved to the user's namespace by its next write; run
// SessionService.MigrateUserState once, with every process upgraded, to
// move the rest, since erasure does not reach state left there.
//
// # Semantics
//
// ADK's scoping rules hold: "app:" keys are shared by every session of the
// app, "user:" keys by the user's sessions, "temp:" keys are never stored,
// and partial events are not persisted. Get honours NumRecentEvents and
// After. Missing sessions are ErrSessionNotFound: ADK v2 has no sentinel of
// its own for them.
//
// AppendEvent writes the event's item, then the session item with a
// compare-and-set on the version read (store.ConditionalPutter): a session
// handle that is no longer current — another process appended since it was
// read, or while this append ran — is refused with ErrStaleSession and
// the session is as it was; Get the session again (NumRecentEvents 1 is
// enough to append). Shared ("app:", "user:") state is then
// merged with its own compare-and-set retries. The two steps are not one
// transaction: if the second fails, the event is stored and the error says
// the shared state was not updated.
//
// An append writes the new event and the small session item (its own
// state, revision, last-update time, event count), whatever the session's
// length; only that small item is rewritten, and so only it is what
// concurrent writers of one session contend for. Get lists the session's
// events with one prefix listing, from the end when NumRecentEvents or
// After leave out the older ones. With a store TTL each event expires on
// its own, oldest first; the session then reads from the first event
// still there.
//
// Versions before this layout kept a session's events inside its item.
// Such sessions are read as they are, and their first append moves the
// events to items of their own, in the same write as the new event.
// # One source for v1 and v2
//
// ADK v2 moved to a new module path and kept the session and memory
// contracts. This package is the v1 adapter (github.com/memvault/memvault/adapters/adk)
// with v2's imports: every file but doc.go and version.go is generated from
// it, and a test fails when they drift. Both adapters store the same layout,
// so an application moving from ADK v1 to v2 keeps its sessions and
// memories (events are stored as ADK's JSON; v2's new event fields, such as
// Output and NodeInfo, are kept as JSON too, so numbers in Output come back
// as float64).
package adkv2

//go:generate go run gen.go
