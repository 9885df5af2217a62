// Package vaulthook lets the tests of backend modules outside the core
// (backends/mongodb) reach a seam of vault that its own tests reach
// directly: a Forget paused between its erasure intent and its key
// transaction. Production code never sets or calls it.
package vaulthook

// AfterClaim sets h's (a *vault.Handle) hook that runs in ForgetWith once
// the erasure's intent is recorded and before the key table's
// transaction (nil: none). vault sets it from its init.
var AfterClaim func(h any, f func(intent int64))
