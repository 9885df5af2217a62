package adk

import "google.golang.org/adk/session"

// This file holds what differs between ADK v1 and v2; the rest of the
// package is the source the adkv2 adapter is generated from.

// ErrSessionNotFound reports that a Get or AppendEvent named a session that
// does not exist. It is ADK's session.ErrNotFound, so ADK's REST layer
// answers 404 for it.
var ErrSessionNotFound = session.ErrNotFound
