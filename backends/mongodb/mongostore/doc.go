// Package mongostore is a store.Store on MongoDB (tested on FerretDB
// v1.24.2; any server speaking the MongoDB protocol with unique compound
// indexes, $or, $in, sort and limit), in the document layout of
// LangGraph's Python MongoDBStore (langgraph-store-mongodb 0.4), so that
// Python agents read what Go wrote in plaintext mode.
//
//	st, err := mongostore.New(ctx, client.Database("checkpointing_db"), mongostore.Options{
//		Index: &store.IndexConfig{Embedder: embeddings.NewUnkeyedHashing(256)},
//		TTL:   &store.TTLConfig{DefaultTTL: 30 * 24 * time.Hour},
//	})
//
// # Driver
//
// Store is the store engine (store/engine) on this package's
// store.Driver, which only stores documents: every rule of the Store
// contract (namespaces, keys, limits, TTL resolution and refresh,
// encoding and sealing, filters, scoring, paging, conditional puts, the
// erasure fence, the sweeper) is the engine's, as on SQLite and
// PostgreSQL. MongoDB-protocol servers may lack multi-document
// transactions (FerretDB has none; Python's store uses none), so a write
// transaction holds the store's writer lease — one document in
// Collection+".lease", taken with a conditional upsert and renewed while
// held (see ErrLeaseLost and Options.LeaseTTL) — from Begin to its end,
// after a lock of this process; so write transactions of every process
// are serialized, and a conditional put (PutIf, store.Update) or a
// re-encryption's compare-and-swap, read and written under the lease,
// cannot interleave with another process's write. A write transaction
// keeps its puts and deletes until Commit, which confirms the lease, then
// reads the items it replaces once (to keep created_at, move the exact
// updated time forward and learn their _id), deletes the vectors of
// re-embedded and deleted items, inserts the new vectors and writes the
// items in one ordered bulk write: a replace or delete by _id and the
// memvault_updated it read (a conditional update: should the lease have
// been lost since, the write fails with store.ErrConflict rather than
// overwrite another writer's), an insert of a new item (with a new
// ObjectId, as Python's upsert makes; the unique index refuses another's).
// Writing by _id matters on FerretDB, which reads every document for an
// update by other fields (a replace by (namespace_str, key) took 22 ms at
// 1 500 items, by _id 6 ms), and keys are looked up with {namespace_str,
// key: {$in}} per namespace, never an $or of pairs (200 pairs: 7–11 s on
// FerretDB, the $in form 0.2 s). A rolled-back transaction writes nothing.
// Consequences: a crash during Commit can leave the last batch's vectors
// written and its items not (the item keeps its old value with the new
// vectors, or, deleted, loses its vectors first) — nothing acknowledged is
// lost, and the next put of the item repairs it; a writer that dies
// holding the lease blocks the others until it expires (LeaseTTL, 30 s by
// default); leases are judged on each process's clock, and a process
// paused longer than the TTL between confirming its lease and its last
// write can still write after another took it (conditional writes then
// refuse what changed) — the limit of leases without fencing tokens.
// Python's MongoDBStore takes no lease: its writes are not serialized with
// memvault's (last writer wins between them, as between Python writers).
//
// An erasure (vault.Forget) calls DrainWrites after destroying a subject's
// keys: it takes the lease once, so every put that found those keys live,
// in any process, has written before the erasure deletes the subject's
// items, and every later one fails with keys.ErrSubjectErased. A write
// transaction checks the fence of its values' keys (and the erasure
// guard: a process on a copy of the key table, see mongosaver's "The
// erasure guard") before it writes and again at Commit just after
// (engine.FenceTx, guardAgain): refused then, it deletes the items and
// vectors it wrote, by the versions it wrote, and fails with
// keys.ErrSubjectErased — so a write that lost the lease (stopped longer
// than LeaseTTL) and landed after the erasure deleted the subject's items
// does not stay. A process killed between such a write and taking it back
// leaves the item; running forget for the subject again deletes it.
//
// # Layout
//
// Items live in Options.Collection ("persistent-store", Python's default,
// in the database the caller picks: Python's default is
// "checkpointing_db"), one document per item:
//
//	namespace_str     labels joined with "/" (Python's sep), e.g. "users/alice/prefs"
//	key               the item's key
//	namespace         the labels, as an array
//	value             the value as a BSON document (plaintext mode, see below)
//	created_at        BSON date (milliseconds), kept on replace
//	updated_at        BSON date (milliseconds)
//	memvault_value    the value as bytes, when it is not stored in "value"
//	memvault_created  Unix nanoseconds: the exact CreatedAt
//	memvault_updated  Unix nanoseconds: the exact UpdatedAt (a version for PutIf)
//	memvault_expires  Unix nanoseconds of the expiry (absent: never)
//	memvault_ttl      the TTL in minutes a read refreshes (absent: none)
//	memvault_indexed  true when the item has vectors
//
// with Python's unique index on (namespace_str, key) under Python's name,
// namespace_str_1_key_1 (an index on the same keys under another name is
// kept). A namespace label holding "/" cannot be stored (store.ErrInvalidNamespace,
// as Python refuses it): namespace_str could not tell it apart. A read
// refuses a document whose namespace_str holds '.' (ErrDocument): no
// label may hold one (store.Namespace.Validate, Python likewise), and
// values are sealed to the labels joined with '.', so ["a.b"] would
// open what was sealed to ["a", "b"]. Prefixes
// are matched as a byte range on namespace_str (p, or [p+"/", p+"0")),
// exact whatever the labels hold, with no regular expression.
//
// Vectors live in Options.VectorsCollection (Collection + ".vectors"),
// one document per embedded field: {namespace_str, key, field,
// memvault_updated, embedding: little-endian float32 bytes}, indexed on
// (namespace_str, key). Python keeps its embedding inside the item and
// searches it with $vectorSearch; memvault does not write Python's
// embedding or namespace_prefix fields (see Search).
//
// # What Python reads
//
// Without Options.Serde, "value" is the item's value as a BSON document
// (int64, double, string, bool, null, binary, documents, arrays), which
// Python's MongoDBStore returns as is, and memvault reads documents Python
// wrote (int32 as an integer, dates as RFC 3339 text, ObjectIds as hex).
// A value with no exact BSON form — an integer beyond int64, a key holding
// '.' or NUL or starting with '$', a string holding NUL, an array directly
// inside an array (FerretDB v1 refuses them), nesting deeper than 90 —
// is stored as its JSON text in memvault_value instead, and such an item
// has no "value" for Python. With a serializer (encryption), every value
// is an envelope sealed to its namespace and key, in memvault_value:
// Python cannot read it and fails on the missing "value" rather than
// seeing a wrong one. Namespaces, keys, timestamps and vectors stay in
// plaintext; vectors are stored as the engine hands them, in their data
// subject's space when subjects are configured, exactly as on SQLite.
//
// # Filters
//
// The engine checks every filter on every item it returns. Without a
// serializer, the query also leaves out items whose "value" fails an
// equality on a string or boolean (see Store's ScanFilter); numbers,
// ordering operators and $ne run in the engine only, because MongoDB's
// number comparison and its matching of arrays differ from the store's
// filter semantics.
//
// # Search
//
// Without a query, searches list items by memvault_updated descending,
// then namespace and key, as every memvault store does. With a query the
// engine ranks as on SQLite (store/vecindex), scoring exactly (cosine, L2
// or inner product, each item by its best field): a store whose vectors
// fit 32 MiB scores every vector from an exact in-process copy; a larger
// one ranks items by sign codes kept beside each vector (code) in an
// in-process index (Options.VectorIndexBytes) and reads and scores
// exactly only the best few. The index's data — a state document
// (generation, codes' generation, centre, coverage), a change log and a
// snapshot, in Collection+".index", ".index_log" and ".index_snapshot" —
// is written at Commit after the items and vectors, the state last, so a
// reader never sees a generation before its data; another process's
// index follows through the log. Writers of every process number
// generations from the state they read under the writer lease, so any
// number of processes may write and search: each process's index
// follows the generations of the others through the log.
// With VectorIndexBytes negative every search reads and scores every
// vector under the prefix. Server-side $vectorSearch (Atlas, or Community with mongot)
// is not available on any server tested here and is not shipped; it
// would plug in as the driver's engine.ANNTx (ranked candidates from a
// $vectorSearch stage over the vectors collection, filtered by
// namespace_str), with the engine rescoring exactly, as pgvector does
// for store/pgstore.
//
// # TTL
//
// Expiry is memvault's: memvault_expires, computed by the engine from
// Options.Now, refreshed by reads when configured, hidden from every read
// once passed, and deleted (with the item's vectors) by the engine's
// sweeper every SweepInterval. That is the tested path. Python's TTL index
// (on updated_at, in seconds) is never created: it would delete
// memvault's items on Python's schedule, not memvault's.
//
// With Options.TTLIndex the store also asks the server for a TTL index
// (expireAfterSeconds 0) on memvault_expires_at, a BSON date copy of the
// expiry written on items (and refreshed with it), so that expired items
// are deleted while no memvault process runs. New probes: FerretDB v1
// refuses the option (NotImplemented), and the store then runs without it
// — Store.TTLIndex says so and why, and a warning goes to slog's default
// logger; MongoDB 5+ and Atlas accept it (not tested here: no mongod could
// be had). A TTL index deletes one document at a time, about once a
// minute, on the server's clock: an item's document goes, while its
// vector documents (another collection) and the code index's count of it
// stay, so every vector document also records the expiry it was written
// with and the sweeper deletes the vectors of such items whose document is
// gone (logging them for the code index). Until the next sweep those
// vectors only cost space: searches drop items without a live document.
// The same per-document deletion is why memvault's saver (mongosaver)
// creates no TTL index: it would leave threads half deleted (a checkpoint
// without its writes, or a child without the parent whose values it
// shares), the Python saver's known problem.
package mongostore
