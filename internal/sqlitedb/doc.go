// Package sqlitedb opens SQLite databases for memvault's embedded backends
// (checkpointer/sqlitesaver and store/sqlitestore) on modernc.org/sqlite, a pure-Go
// SQLite with no cgo.
//
// # One file, one handle
//
// Open keeps a process-wide registry keyed by the database file's absolute
// path: a saver and a store opened on the same file share one handle (and
// its connection pools); the handle is closed when its last user calls
// Close. Wrap adopts a *sql.DB the caller opened and owns.
//
// # One writer, many readers
//
// A handle from Open has two pools over the same file: a writer pool of a
// single connection whose transactions start with BEGIN IMMEDIATE, and a
// reader pool of query-only connections. In WAL mode readers never block the
// writer nor the writer the readers, and because a write transaction takes
// the write lock when it begins, it never fails half-way with SQLITE_BUSY
// trying to upgrade a read lock. Writers of other processes wait for the
// lock for up to Options.BusyTimeout.
//
// ":memory:" opens a private in-memory database on a single connection that
// serves reads and writes (an in-memory database lives in its connection).
// It is meant for tests; it is not registered, so two Open(":memory:") calls
// give two databases.
//
// # Pragmas and durability
//
// Every connection runs with journal_mode=WAL, busy_timeout (default 5 s),
// foreign_keys=ON, synchronous=NORMAL unless Options.Synchronous says FULL,
// mmap_size=64 MiB (reads of mapped pages need no system call and share
// the page cache between connections; 0 with Options.NoMmap, which
// store/sqlitestore asks for) and temp_store=MEMORY. In WAL mode synchronous=NORMAL is durable against a crash of the
// process (a committed transaction is in the WAL file, in the operating
// system's page cache, before COMMIT returns; SIGKILL cannot lose it) and
// never corrupts the database; only an operating-system crash or power loss
// can roll back the last transactions before a checkpoint. FULL syncs the
// WAL on every commit and survives power loss, at the cost of an fsync per
// write transaction.
//
// WriteCommitted runs a callback after a commit, in commit order, for
// callers that keep in-process state (such as a cache) in step with the
// database.
//
// # Migrations
//
// Every SQLite schema memvault makes (checkpointer, store, key table, audit
// trail, memvault_meta) is a directory of numbered .sql files the package
// embeds; Load reads them as a component's steps (file N is step N, and may
// hold several statements). Migrate applies the steps not yet recorded in
// memvault_migrations(component, v), in order, inside one write
// transaction, so concurrent processes set up a database safely; MigrateTx
// does the same inside a transaction the caller began, so that the schema
// commits or rolls back with the caller's writes.
package sqlitedb
