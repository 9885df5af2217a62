// Package inspector is memvault's web inspector: an http.Handler that shows
// a vault's threads (checkpoints as a server-drawn timeline with forks and
// subgraph namespaces, decoded channel values, metadata, pending writes and
// a diff against the parent), its memories (namespace tree, items with TTL,
// semantic search with scores), the key census and, with per-subject keys,
// who has keys and who was erased, and the audit trail with its
// verification status, the retention settings and the last deletion.
//
// # Safe by construction
//
//   - Read-only by default. Store reads never refresh a TTL (an inspector
//     looking must not keep a memory alive); a HEAD renders nothing.
//   - Write actions (delete a thread, fork a checkpoint, erase a data
//     subject) only with Options.AllowWrite, else every POST answers 403.
//     Each has a confirmation page where the target is typed again; the
//     action is a POST carrying a CSRF token bound to the session
//     (WithSession; an HMAC under a key drawn at New, compared in constant
//     time), refused unless Fetch Metadata (Sec-Fetch-Site) and Origin say
//     the form came from the inspector's own origin, and recorded in the
//     audit trail under the principal like any write.
//   - Every page is rendered on the server with html/template, which escapes
//     every value, key, namespace and id; text is also made printable
//     (invalid UTF-8, control and bidirectional-override characters are
//     shown as escapes) so that a hostile value can neither inject markup nor
//     disguise itself. The pages hold no script at all and no inline style:
//     the Content-Security-Policy forbids both (default-src 'none').
//   - Every response, errors and 401s included, carries
//     Content-Security-Policy, Cache-Control: no-store,
//     X-Content-Type-Options: nosniff, Referrer-Policy: no-referrer and
//     X-Frame-Options: DENY.
//   - A browser request made by another origin's page, other than a
//     top-level navigation (Fetch Metadata), answers 403: SameSite cookies do
//     not tell the ports of 127.0.0.1 apart, so any local server's page could
//     otherwise make the browser load inspector pages with the session.
//   - Reads go through the handle's saver and store: when the vault audits
//     (MEMVAULT_AUDIT=true) every view that decrypts is recorded in the
//     trail, under the principal Options.Principal names ("inspector" by
//     default).
//   - Large values are cut at Options.MaxValueBytes (4 KiB) with a link to a
//     page holding the value, itself cut at 1 MiB with a link that downloads
//     the whole value as a JSON file (an attachment: saved, never rendered).
//
// # Mounting
//
// New returns a handler with no authentication of its own: mount it behind
// the admin server's authentication (with Options.BasePath when it is not
// served at the root). NewTokenGate is the authentication `memvault
// inspect` uses: a one-time token exchanged for a session cookie, which
// also sets the session its CSRF tokens are bound to. Behind another
// authentication, set the session with WithSession: write actions are
// refused on a request without one (their CSRF tokens are bound to it).
package inspector
