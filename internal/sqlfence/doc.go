// Package sqlfence runs a write's fences on SQLite, for the checkpointer's
// and the store's drivers alike, inside the write's transaction (which
// holds the database's write lock): the check of the keys in the key
// table (always another file), then the fence's statements — the data
// database's erasure guard (keys.ErasureGuard), a query of one boolean
// that is true when it refuses the write. Running the guard on the write's
// own connection costs a statement; a read on another connection would
// begin a read transaction (several system calls) on every write.
package sqlfence
