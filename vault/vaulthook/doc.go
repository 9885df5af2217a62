// Package vaulthook lets the tests of modules outside the core
// (backends/mongodb) reach a seam of vault that vault's own tests reach
// directly: a Forget paused between its erasure intent and its key
// transaction, where an Open or a second Forget must leave it alone. It is
// exported, not internal, because a module may not import another
// module's internal packages. Production code never sets or calls it.
package vaulthook
