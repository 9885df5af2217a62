// Package pgmigrate is memvault's one PostgreSQL migration runner, used by
// the checkpointer, the store, the key table, the audit trail and
// memvault_meta: LangGraph's numbering (statement i of a
// set recorded as v = i in the set's tracking table, as Python's and JS's
// setup() do), every setup statement of every component serialized by one
// database-wide advisory lock (LockKey) and skipped without waiting for it
// when already recorded, CREATE INDEX CONCURRENTLY outside transactions
// (an index an interrupted run left invalid is dropped and built again),
// and inside a caller's transaction the same statements without
// CONCURRENTLY under a transaction-scoped lock.
package pgmigrate
