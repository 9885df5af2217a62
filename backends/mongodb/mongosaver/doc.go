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
// and checkpoint (the whole checkpoint as one binary, channel values
// inline, see below), and metadata as a nested document whose non-dict
// values are [type, binary] pairs written by serde.MsgPack, byte-identical
// to Python's msgpack, so Python's list(filter=...) matches what Go wrote.
// Channel versions are integers by default, as both MongoDBSavers write
// them. Setup creates the two unique compound indexes under the names
// Python's create_index gives them, so Python's saver finds them and
// creates nothing; where JS's setup() made its (non-unique) index on the
// same keys, Setup keeps it.
//
// # What Python and JS read
//
// The checkpoint binary depends on the serializer (form.go):
//
//   - plaintext JSON (serde.JSONPlus, the default): type "json", the
//     checkpoint with every value inline. Python's JsonPlusSerializer and
//     JS's both read "json": Python reads and continues memvault's
//     checkpoints, values included. JS reads the binary too, but not
//     Python's metadata layout (it calls .value() on a document); with
//     Options.JSLayout the metadata is written as JS writes it (one JSON
//     binary plus metadata_search) and JS lists, reads and continues
//     memvault's checkpoints — Python then cannot read their metadata.
//   - plaintext msgpack (serde.MsgPack, or a continuation of a Python
//     thread, whose values came as msgpack): type "msgpack", the whole
//     checkpoint as Python writes it. Python reads it; JS cannot (its
//     serializer reads "json" and "bytes" only).
//   - encrypted (any encrypting serializer): no value inline. Each value
//     is sealed bound to its thread, namespace, channel and version under
//     keys only memvault holds, so neither Python nor JS can open it —
//     not even with LangGraph's "aes" format, which would need the whole
//     checkpoint encrypted as one value. The binary is memvault's
//     document without values, typed "json+memvault", which Python's and
//     JS's serializers refuse loudly rather than resuming from an empty
//     state; pending writes are sealed too.
//
// Three fields are memvault's own, ignored by Python and JS:
// memvault_values holds the rows that are not inline (sealed values, and
// channels with a version but no value), memvault_keys names every value
// of the checkpoint (channel and version) for lookups, memvault_v is the
// checkpoint format version. A checkpoint_writes document is Python's:
// thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx,
// channel, type, value.
//
// memvault reads, in one collection, its own documents, Python's (type
// "msgpack", values inline, nested metadata, including leaves written
// before langgraph-checkpoint-mongodb 0.2.2 as raw JSON) and JS's (type
// "json", metadata one binary, metadata_search and upserted_at ignored,
// writes without task_path). Metadata whose keys cannot be field names
// (holding '.' or NUL, starting with '$', empty) is stored as one binary
// of JSON whatever the layout.
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
// from copies read before their first change. Across processes, a lease
// document per thread (collection memvault_leases: owner, expiry, taken
// with a conditional upsert; lease.go) is held by a put or a task's
// writes from before their read to after their write, and by an Update
// for every thread it reads or changes until it ends: a removal in one
// process cannot interleave with a put in another. Leases are renewed
// every third of Options.LeaseTTL while held; a holder that finds its
// lease taken (it was paused, or cut off from the server, longer than the
// TTL) stops with ErrLockLost, and a put confirms its lease just before
// it writes its document. A put or pending write keeps its lease after it
// ends (sticky.go): the next write of the thread in this process pays no
// round trip for it, and the confirmation is a look at the clock while the
// lease is far from its expiry. A background renewal keeps the leases and
// lets go of one that is idle, or that another process asked for (a
// removal waiting for it, DrainWrites), within Options.LeaseTTL/6 (200 ms
// at most) once the write using it ends. So a steady writer of a thread
// pays no lease round trip, and the first write of a thread two (take,
// then release when idle, off the write's path). While it keeps the
// lease, the process also knows what a put's read would find (the
// namespace's ids and value keys, and the document it wrote last;
// putcache.go): from the third put of a thread on, a put continuing the
// last one sends its document alone, one command as the raw driver's
// upsert. Options.NoLeases drops the leases where one process alone
// writes (every put then reads). What leases do not cover: a process that dies during a
// multi-thread Update leaves the threads it had changed changed (its
// leases expire after Options.LeaseTTL, during which other writers of
// those threads wait; threads it was creating are deleted by the next
// taker); two Updates taking the same threads in different orders make
// one give up (ErrLeaseBusy); and, with no fencing token, a write already
// sent when the lease ran out still lands. Leases rely on the server
// changing a document atomically, as MongoDB's findAndModify and updates
// do; FerretDB v1's find the document, then write it back whole by _id,
// so there two processes' changes of one lease at the same moment can
// lose one of them (one side then stops with ErrLockLost, or waits for
// an expiry). Within one process the driver never sends two changes of
// a lease at once: its thread's in-process lock orders the renewer's
// letting go and a write's or an Update's taking.
//
// Every taking of a lease writes a new token. An erasure (vault.Forget)
// calls DrainWrites after destroying a subject's keys: it waits until
// every lease held when it began has been released, taken again or has
// expired, so that every put or pending write that found the keys live —
// in any process, into a thread the erasure will list or into a new one —
// has written before the erasure lists and deletes the subject's threads,
// and every later one fails with keys.ErrSubjectErased (writes check the
// keys holding their thread's lease).
//
// # The erasure guard
//
// A process running on a copy or a backup of the key table taken before
// an erasure of subject S still holds S's keys; the key check cannot see
// the erasure. vault.Forget records it first in the database, as the mark
// erased_subject:S (keys.ErasedSubjectMark) holding the erasure's
// number, before it destroys keys, drains and deletes S's rows; every
// write of S compares that number with its key table's count of
// erasures (keys.ErasureGuard), which a copy's is behind. SQLite and
// PostgreSQL compare inside the write's transaction. Here there is none,
// so a write checks twice: before it writes, as the engine asks (a
// refused write stores nothing), and again just after (guardAgain):
// refused then, it deletes what it wrote — the checkpoint document and
// the large-value chunks it wrote, the pending writes it upserted — and
// fails with keys.ErrSubjectErased. In Update, the fences given to Fence
// are checked again before the leases go, a refusal restoring the
// threads. Why no write of S outlives a Forget(S) that returned: Forget
// (F) (1) writes the mark, then (4) deletes S's rows; a write (W) (b)
// stores its document, then (c) reads the mark. MongoDB orders the
// single-document operations of one server (writes go to the primary;
// mongovault reads the marks, and this saver its leases, from the
// primary whatever the URI's readPreference), so either (c) reads the
// mark — and W takes its document back — or (c) reads before (1) wrote
// it, so (b), acknowledged before (c) began, precedes (1) and so (4), which deletes
// the document with S's other rows. A write landing after Forget
// returned lands after (1): its check after the write refuses it. While
// W holds its lease, F's drain (between (1) and (4)) waits for W anyway;
// the second check matters when W lost the lease — it was stopped
// longer than Options.LeaseTTL between its check and its write. What
// stays: a process killed between such a late write and taking it back
// leaves the document (sealed under a key only the copy still holds);
// no Open finds it (an erasure intent marked done is not finished again,
// and finishing one deletes no row), running forget for S again deletes
// it when S's threads are found by their ids; a thread bound to S only
// in the copy's key table (subjects named in metadata) is not found by
// the erasure at all. Cost with per-subject keys: one more read of the
// mark and one more key-table read (the fence's key check) per put or
// pending write; none without.
//
// A MongoDB document is limited to 16 MiB (MaxDocumentSize; FerretDB
// accepts more, so the driver checks the size itself). A checkpoint
// whose document would exceed it is stored with its largest values moved
// to memvault_big_values, in 8 MiB chunks written before the document
// under a generation id the document names (big.go), never changed in
// place: a crash leaves unreferenced chunks, collected later, never a
// checkpoint reading another attempt's value. memvault reads them back
// whole; Python and JS do not see those values. A pending write over the limit, or a checkpoint over it
// with every value moved out, fails with ErrTooLarge and stores nothing.
//
// # Servers
//
// MongoDB 6+ and Atlas, FerretDB, Azure Cosmos DB for MongoDB vCore and
// Amazon DocumentDB speak the protocol; only FerretDB v1.24.2 (SQLite
// backend) was tested. The driver uses no transaction, no TTL index (a
// TTL index deletes one document at a time and would leave threads half
// deleted — a checkpoint without its writes, a child without the parent
// whose values it shares —, Python's saver's known problem; memvault's
// retention sweeper deletes whole threads), no aggregation: finds with sort and limit, $in, $nin, $or, $ne, $exists,
// $type, distinct, replace and bulk upserts (and, in Setup, dropIndexes
// of the chunks' index before generations).
package mongosaver
