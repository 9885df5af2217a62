package vaulthook

// AfterClaim sets h's (a *vault.Handle) hook that runs in ForgetWith once
// the erasure's intent is recorded and before the key table's
// transaction (nil: none). vault sets it from its init, so it is nil in
// a program that does not link vault.
var AfterClaim func(h any, f func(intent int64))
