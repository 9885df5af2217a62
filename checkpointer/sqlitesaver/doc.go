// Package sqlitesaver is memvault's embedded checkpointer: a checkpointer.Saver
// on a single SQLite file, with no server and no cgo (modernc.org/sqlite).
// It is what runs when there is no PostgreSQL.
//
//	saver, err := sqlitesaver.Open(ctx, "agent.db", sqlitesaver.Options{Serde: encrypted})
//	...
//	defer saver.Close()
//
// # Tables
//
// The tables mirror LangGraph's PostgreSQL checkpointer, column for column
// and with the same primary keys: checkpoints (the checkpoint document and
// metadata as JSON text), checkpoint_blobs (one row per channel value,
// keyed by thread, namespace, channel and version; type "empty" for a
// channel without a value) and checkpoint_writes (pending writes, ordered by
// task id and index, with the special channels' negative indices and
// LangGraph's upsert / insert-if-absent rule). Every channel value is a blob
// row, never inline in the document, which is what encryption needs. The
// schema is versioned in memvault_migrations (component "checkpointer") and
// set up by Open and New.
//
// A checkpoint's values are found by each channel's current version, so a
// channel written by an ancestor is loaded from the ancestor's row. Put
// writes the blob rows and the checkpoint row in one transaction.
//
// # Encryption
//
// Values pass through Options.Serde. A serde.BoundSerializer (such as
// serde.Encrypted) binds each blob to its thread, namespace, channel and
// version and each write to its thread, namespace, checkpoint, task, index
// and channel, as the PostgreSQL
// saver does: a row copied to another thread does not decrypt. CopyThread
// re-encrypts under the destination thread. Ids, versions and metadata
// stay in plaintext (metadata is filtered on).
//
// # Concurrency and durability
//
// Open keeps one handle per database file, shared with store/sqlitestore: a
// single writer connection whose transactions take the write lock at BEGIN
// (no SQLITE_BUSY half-way), and a pool of read-only connections; the file
// is in WAL mode, so readers and the writer do not block each other. Other
// processes may use the same file; they wait up to 5 s for the write lock.
// A Put that returned survives the crash (even SIGKILL) of the process; with
// Options.FullSync it also survives power loss. See TestDurability.
//
// List reads 64 rows per read transaction and holds no connection while
// the consumer runs. Scalar entries of a metadata filter are evaluated by
// SQLite (json_extract); the full JSON-containment rule is then applied in
// Go, before the limit.
//
// # Versions
//
// With checkpointer.VersionInt (JS LangGraph's integer versions) a fork from
// an older checkpoint can produce a (channel, version) pair that exists
// already; as in LangGraph's PostgreSQL saver the first value is kept. The
// default string versions carry a random suffix and do not collide.
package sqlitesaver
