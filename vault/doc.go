// Package vault opens a wired memvault from a config.Config and holds the
// operator's operations on it.
//
// Open connects to the configured database (the embedded SQLite file or
// PostgreSQL), creates or upgrades its tables, and returns a Handle: the
// checkpointer and the store, sealed under the configured keys, with the
// key hierarchy of per-subject keys and the audit trail when they are on.
// The Handle's methods are what `memvault` runs for an operator:
// re-encryption after a key rotation (Reencrypt), re-embedding
// (Reembed), KEK and subject key rotation (RotateKEK, RotateSubject,
// Readmit), erasure of a data subject (Forget, ForgetWith), the census of
// what each key sealed (Census), compaction (DangerousCompact) and the
// schema versions (Migrations).
//
// MongoDB and Redis are served by backend modules outside the core (their
// clients stay out of this module's go.mod): their wiring packages
// register their DSN schemes with RegisterBackend, and Open picks the
// backend by the scheme of Config.DSN (see backends.go).
//
// Package config parses the environment into a Config; this package is
// where that configuration becomes databases, keys and files.
package vault
