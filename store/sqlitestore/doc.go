// Package sqlitestore is memvault's embedded store: a store.Store on a single
// SQLite file, with no server and no cgo (modernc.org/sqlite), so that an
// agent's long-term memory survives restarts on a laptop.
//
//	st, err := sqlitestore.Open(ctx, "agent.db", sqlitestore.Options{
//		Index: &store.IndexConfig{Embedder: embeddings.NewUnkeyedHashing(256)},
//		TTL:   &store.TTLConfig{DefaultTTL: 30 * 24 * time.Hour},
//	})
//	...
//	defer st.Close()
//
// # Driver
//
// Store is the store engine (store/engine) on this package's
// store.Driver: the package holds only storage — the SQL of the tables
// below, their migrations, Begin-style transactions on one writer and
// concurrent readers (internal/sqlitedb), and the tables of the code
// index (codes, change log, snapshot, coverage) behind the engine's
// optional interfaces (engine.IndexTx, engine.IndexWriter,
// engine.FloatSource) and its upserts that keep created_at
// (DriverCaps.UpsertVersions). Every rule of the Store contract,
// the code index's ranking and upkeep and the exact float copy are the
// engine's.
//
// # Tables
//
// The tables mirror LangGraph's PostgreSQL store: store(prefix, key,
// value, created_at, updated_at, expires_at, ttl_minutes) keyed by
// (prefix, key), the namespace stored as its labels joined with '.', and
// store_vectors(prefix, key, field_name, embedding, ...) with a foreign key
// to store that cascades deletes (a table with row ids keyed by its
// primary key's unique index since migration 9: a WITHOUT ROWID table of
// 6 KiB rows read every row a lookup compared whole). Values are JSON text; embeddings are
// little-endian float32 blobs; timestamps are Unix nanoseconds computed in
// Go from Options.Now. The schema is versioned in memvault_migrations
// (component "store"). A checkpointer/sqlitesaver saver opened on the same file
// shares the connections (one writer, concurrent readers, WAL).
//
// # Values and encryption
//
// Without Options.Serde the value column is the plain JSON object. With a
// serializer it is an envelope {"t": type tag, "d": base64 payload}, bound
// by a serde.BoundSerializer (serde.Encrypted) to its (namespace,
// key): a row copied to another namespace or key does not decrypt. Filters
// are then evaluated in Go after decryption, and paging stays exact.
// Namespaces, keys, timestamps and vectors stay in plaintext (vectors in
// the keyed or sealed space the vault's embedder gives them with a key:
// see the README's "What is encrypted").
//
// # Search
//
// Namespace prefixes are matched on the stored text with a byte range
// (prefix = 'a.b' OR 'a.b.' <= prefix < 'a.b/'), which is exact, needs no
// LIKE escaping, respects case and uses the primary key. Searches without
// a query order by updated_at descending, then namespace and key. Filters
// (the store core's filter engine: numbers compare as numbers) run in Go.
//
// A search with a query scores items as an exact scan would (cosine, L2
// or inner product, as index.Score, each item by its best field), items
// with vectors first by score, then the others in the no-query order,
// offset and limit applying to that combined list. A small store (its
// vectors within FloatCacheBytes) scores every vector from an exact
// in-process copy, loaded on the first search and kept in step with this
// process's writes (another process's write makes the next search reload
// it). A larger store does not read every vector: each vector also has a
// sign code (one bit per dimension of a fixed rotation of the vector minus
// the store's mean vector, with three norms;
// store_vector_codes, written in the vector's transaction), which an
// in-process index keeps in contiguous arrays (about 208 bytes per
// 1536-dimension vector, Options.VectorCacheBytes). Each code also has
// an 8-bit quantization of the rotated vector (d + 8 bytes, not kept in
// memory), in a table of its own keyed as the code row
// (store_vector_fine), so that code rows fit SQLite's page. A search
// bounds every item's score from its sign bits, bounds the best of them
// again from their 8-bit parts, read by key in one query a batch (inside
// one dense topic, whose items share most sign bits, only these tell the
// items apart), then reads from store_vectors and scores exactly the
// items of highest bound until no remaining bound can beat the page's
// last exact score (about 20 reads for k = 10 at 20 000 items in 16
// dense topics of 1 250, where the sign bits alone left the whole
// topic), so results equal the exact scan's unless a code misjudges
// an item by more than four (sign bits) or six (8-bit part) standard
// deviations; code rows of the earlier format (sign bits only) still
// rank, by their sign bits; when the bounds stay loose
// (low-dimension, sparse vectors), a search stops after a tenth of the
// items and ranks by one exact scan. Each item-changing
// transaction bumps a generation and logs the items it changed
// (store_vector_log): another process's index reads only those items'
// codes, and opening loads a serialized snapshot of the index
// (store_vector_snapshot) plus the log since: the first search after
// opening reads the snapshot's sign bits (a sixth of its bytes at 1 536
// dimensions) and bounds its candidates by their fine parts, while a
// goroutine reads the codes' middle parts in a read transaction of its
// own, started once that search has returned (Close stops it and waits
// for it); later searches bound by them. A delete drops the snapshot (it
// held the item's name and code); the store that deleted, when it holds
// the index, stores a new one of it behind the delete, at the
// generation the delete made (Close waits for it), and otherwise the
// next store whose search finds none does, so that a store that deletes
// (its TTL sweeper too) still opens from a snapshot.
// Beside the codes the store
// keeps their coverage (how many items have codes and a checksum of their
// keys, updated by every write): an index whose own coverage differs (its
// snapshot's rows deleted or rewritten, log rows deleted, by hand or by a
// tool) is not used; the search reads every code row instead, and the
// next Batch stores a new snapshot. Without the index (or when it does
// not fit) each search reads every vector from SQLite.
//
// # TTL
//
// TTLs are kept in whole minutes as in LangGraph (items.TTLMinutes), the
// expiry computed from Options.Now. Reads refresh TTLs when configured
// (store.TTLConfig), omit-expired reads hide expired items, and a sweeper
// goroutine deletes them every SweepInterval until Close.
package sqlitestore
