// Package adk makes memvault the persistence layer of Google's Agent
// Development Kit for Go (google.golang.org/adk): SessionService is an ADK
// session.Service on any memvault store — SQLite by default, PostgreSQL in
// production, encrypted when the store is.
//
// # Layout
//
// Everything lives under one namespace prefix of the store (Options.Prefix,
// "adk" by default), then the app name:
//
//	<prefix> <app> sessions <user>             key: session id   the session: its own state and its events
//	<prefix> <app> app-state                   key: "state"      state keys written as "app:…"
//	<prefix> <app> user-state <user>           key: "state"      state keys written as "user:…"
//	<prefix> <app> memory <user> <session id>  key: event id     memories (MemoryService)
//
// Labels are escaped ("." and "%" become "%2E" and "%25"), so any app name
// or user id is a valid namespace. With an encrypting store each session is
// one ciphertext bound to its namespace and key: a session copied under
// another user or app does not decrypt.
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
// After. Missing sessions are ErrSessionNotFound (which is ADK's
// session.ErrNotFound).
//
// AppendEvent is a compare-and-set on the session (store.ConditionalPutter):
// a session handle that is no longer current — another process appended
// since it was read — is refused with ErrStaleSession and nothing is
// written; Get the session again. Shared ("app:", "user:") state is then
// merged with its own compare-and-set retries. The two steps are not one
// transaction: if the second fails, the event is stored and the error says
// the shared state was not updated.
//
// Each append rewrites the session's item (one sealed value holding its
// state and events), which suits sessions of up to a few thousand events;
// summarise or rotate longer ones.
package adk
