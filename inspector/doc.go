// Package inspector is memvault's web inspector: an http.Handler that shows
// a vault's threads (checkpoints as a server-drawn timeline with forks and
// subgraph namespaces, decoded channel values, metadata, pending writes and
// a diff against the parent), its memories (namespace tree, items with TTL,
// semantic search with scores), the key census and the audit trail with its
// verification status.
//
// # Safe by construction
//
//   - Read-only: this version has no action that writes. Store reads never
//     refresh a TTL (an inspector looking must not keep a memory alive).
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
// inspect` uses: a one-time token exchanged for a session cookie.
package inspector
