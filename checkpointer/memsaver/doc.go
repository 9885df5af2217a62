// Package memsaver provides InMemorySaver, a checkpointer.Saver that keeps
// everything in process memory: for tests, examples and ephemeral agents.
//
// It stores what LangGraph's InMemorySaver stores. Checkpoints live under
// thread, namespace and id without their channel values; each value is
// serialized once, as a (type, bytes) blob keyed by thread, namespace, channel
// and version, and loaded by a checkpoint through the current version of each
// of its channels; pending writes are serialized blobs keyed by checkpoint,
// task id and index. Because every value goes through the serializer on the
// way in and out, callers never share memory with the saver: mutating a value
// after Put, or a value returned by GetTuple, leaves the stored state intact.
// An encrypting serializer (serde.BoundSerializer) receives the associated
// data of each value's location (thread, namespace, channel, version; for
// writes checkpoint, task, index and channel), exactly as the SQL backends give
// it, so the same ciphertext rules apply here.
//
// PutWrites follows PostgreSQL's rule (rows.UpsertWrites: a call
// whose writes all target special channels overwrites, any other call keeps
// existing writes) rather than Python InMemorySaver's per-write rule, so every
// memvault backend behaves alike.
//
// Metadata is kept as plain JSON (decoded into map[string]any with int64 and
// float64 numbers) and filtered with rows.MetadataContains, the
// semantics of PostgreSQL's metadata @> filter.
//
// InMemorySaver is safe for concurrent use; List snapshots the matching ids
// under a read lock and loads each tuple as the consumer asks for it. It also
// implements checkpointer.Pruner, checkpointer.Copier,
// checkpointer.RunDeleter, checkpointer.Sweeper (in the background too
// when Options.Retention is set; Close stops it) and, with a serde.Encrypted serializer,
// checkpointer.Reencrypter. CopyThread re-binds encrypted values to the
// destination thread, since their associated data names the thread.
package memsaver
