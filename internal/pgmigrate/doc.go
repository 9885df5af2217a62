// Package pgmigrate is memvault's one PostgreSQL migration runner, used by
// the checkpointer and the store: LangGraph's numbering (statement i of a
// set recorded as v = i in the set's tracking table, as Python's and JS's
// setup() do), concurrent Setup calls serialized by an advisory lock per
// schema and component, CREATE INDEX CONCURRENTLY outside transactions
// (an index an interrupted run left invalid is dropped and built again),
// and inside a caller's transaction the same statements without
// CONCURRENTLY under a transaction-scoped lock.
package pgmigrate
