// Package mongosaver is memvault's checkpointer on MongoDB: the engine of
// checkpointer/engine over a driver that stores documents in the layout of
// Python LangGraph's MongoDBSaver (langgraph-checkpoint-mongodb 0.4), in the
// collections "checkpoints" and "checkpoint_writes".
//
// # Usage
//
//	client, err := mongo.Connect(options.Client().ApplyURI(uri))
//	...
//	saver, err := mongosaver.New(client.Database("checkpointing_db"), mongosaver.Options{})
//	...
//	if err := saver.Setup(ctx); err != nil { ... } // indexes, once
//
// The Saver is a checkpointer.Saver with every optional capability
// (prune, copy, delete by run, retention sweep, import, re-encryption);
// every rule comes from the engine, and checkpointertest.Run passes on it
// in full, plaintext and encrypted (tests run FerretDB v1.24.2 in-process,
// see backends/mongodb/mongotest).
//
// # Layout
//
// A checkpoints document has Python's fields: thread_id, checkpoint_ns,
// checkpoint_id, parent_checkpoint_id (a string, or null for none), type
// and checkpoint (the checkpoint as one binary: memvault writes its JSON
// document, type "json", which Python's JsonPlusSerializer reads), and
// metadata as a nested document whose non-dict values are [type, binary]
// pairs written by serde.MsgPack, byte-identical to Python's msgpack, so
// Python's list(filter=...) matches what Go wrote. Channel versions are
// integers by default, as both MongoDBSavers write them. Setup creates the
// two unique compound indexes under the names Python's create_index gives
// them, so Python's saver finds them and creates nothing.
//
// Three fields are memvault's own, ignored by Python and JS:
// memvault_values holds the checkpoint's channel values as the engine
// sealed them (one entry per channel: channel, version, serde type,
// bytes) — values are encrypted and bound to their thread, namespace,
// channel and version when the serializer encrypts; memvault_keys names
// them for lookups; memvault_v is the checkpoint format version.
// A checkpoint_writes document is Python's: thread_id, checkpoint_ns,
// checkpoint_id, task_id, task_path, idx, channel, type, value.
//
// Metadata whose keys cannot be field names (holding '.' or NUL, starting
// with '$', empty) is stored as JS's MongoDBSaver stores metadata, one
// binary of JSON: memvault reads it, Python does not.
//
// What Python and JS see of a memvault checkpoint today: the document, the
// metadata and the pending writes, but not the channel values, which live
// in memvault_values (Python's checkpoint keeps them inline in the
// checkpoint binary). Writing plaintext values inline for Python, and
// reading checkpoints Python wrote (type "msgpack"), are not done yet;
// such a checkpoint is refused with ErrDocument.
//
// # Without transactions
//
// MongoDB-compatible servers may have no multi-document transactions
// (FerretDB has none; Python's saver uses none), so the driver relies on
// single-document atomicity and on the order of its writes:
//
//   - a put is one document: the checkpoint with every value it
//     references (the new ones and those it inherits, copied from the
//     parent's document read in the same round trip); a crash stores all
//     of it or nothing, and a checkpoint never references a missing value;
//   - pending writes are one ordered bulk upsert: a crash can store a
//     prefix of a task's writes (LangGraph re-runs a task whose writes are
//     incomplete);
//   - removals delete checkpoints first, then their writes: a crash in
//     between leaves writes of a checkpoint that is gone, which the next
//     removal deletes as an orphan write set, never a checkpoint without
//     its writes;
//   - copies, imports and re-encryption write the writes first and the
//     checkpoints last.
//
// The driver declares itself Serialized: Update (removals, copies,
// imports, re-encryption) holds a lock that puts of the same Saver hold
// shared, and when its function fails the threads it touched are restored
// from copies read before their first change. That covers one process.
// Across processes nothing is serialized: a removal may delete a
// checkpoint another process is continuing (the put still stores its
// document whole, with its inherited values, since it copies them from
// the parent it read; only its parent link dangles), and a crash during
// a multi-thread Update leaves the threads it had changed changed. Run
// removals (prune, sweep, delete by run) from one process per database,
// or give them a lease: a lease document per thread, taken with an
// upsert before a removal and checked by puts, is the protocol a
// multi-process deployment needs (DriverTx.Lock), not built yet.
//
// # Servers
//
// MongoDB 6+ and Atlas, FerretDB, Azure Cosmos DB for MongoDB vCore and
// Amazon DocumentDB speak the protocol; only FerretDB v1.24.2 (SQLite
// backend) was tested. The driver uses no transaction, no TTL index, no
// aggregation: finds with sort and limit, $in, $or, $ne, $type, distinct,
// replace and bulk upserts.
package mongosaver
