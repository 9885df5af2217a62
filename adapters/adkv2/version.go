package adkv2

import "errors"

// This file holds what differs between ADK v1 and v2; the rest of the
// package is generated from the v1 adapter (see gen.go).

// ErrSessionNotFound reports that a Get or AppendEvent named a session that
// does not exist. ADK v2 has no sentinel of its own for it (v1 has
// session.ErrNotFound), so the adapter provides one.
var ErrSessionNotFound = errors.New("adk: session not found")
