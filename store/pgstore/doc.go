// Package pgstore is a store.Store on PostgreSQL with pgvector: LangGraph's
// store / store_vectors tables, values optionally encrypted at rest, semantic
// search served by an HNSW or IVFFlat index, TTLs with a sweeper.
//
// # Compatibility with LangGraph
//
// Setup runs LangGraph's migrations with LangGraph's numbering
// (store_migrations 0..3, and vector_migrations 0..2 when an index is
// configured; memvault's own table, memvault_store_embedder, is tracked
// apart in memvault_vector_migrations), the same DDL, index names and
// operator classes, so Python's PostgresStore.setup() is a no-op on tables
// memvault created and the other way round. Unencrypted values are plain JSONB objects that Python reads as
// its own, and rows Python wrote (values and store_vectors) are read,
// searched and filtered here. Each statement runs outside a transaction
// (CREATE INDEX CONCURRENTLY cannot run in one) and concurrent Setup calls
// are serialized by memvault's one setup advisory lock. Options.Schema qualifies every table;
// the default is unqualified names, resolved through search_path, as in
// Python.
//
// Vectors are stored as vector(dims), or halfvec(dims) when
// ANNConfig.HalfVec is set or dims exceed 2000 (pgvector's limit for vector
// indexes; halfvec indexes take up to 4000). Changing dims later is not
// migrated. Vectors are written in pgvector's binary format
// (github.com/pgvector/pgvector-go): the store registers pgvector-go's codecs
// on each connection the first time it writes vectors on it (one query per
// connection), so any pgx pool works as it is; a 1536-dimension insert is
// 2.4× faster than in text (BenchmarkVectorParam). A search's query vector
// goes in binary on those connections too, and as text on others. Under the
// simple protocol (PgBouncer's transaction pooling) vectors go in pgvector's
// text form, cast in SQL.
//
// Where memvault differs from LangGraph, on purpose:
//   - Filters compare numbers as numbers ($gt 5 matches 10) and strings
//     byte-wise; LangGraph compares the text of the field (issue #7684). A
//     field of another kind than the operand, or a missing one, never
//     matches, not even $ne.
//   - A re-put replaces an item's vectors: fields it no longer has, and puts
//     WithoutIndex, leave no stale vectors (LangGraph keeps them).
//   - Search with a query is shaped for the index (see below) and counts
//     the offset in its candidates; items without vectors follow the scored
//     ones, and offset and limit apply to that combined list.
//   - Timestamps come from Options.Now, not the server's clock.
//   - A value containing U+0000, which JSONB cannot hold, is stored in an
//     unencrypted envelope that only memvault reads (and filters in Go:
//     the SQL filter lets envelopes through).
//
// # Search
//
// The store engine (store/engine) runs searches, as on every
// backend; this package's driver gives it what PostgreSQL does better. A
// search with a query asks the index for the nearest vectors under the
// namespace prefix (engine.ANNTx),
//
//	SELECT prefix, key, embedding <=> $q FROM store_vectors
//	WHERE <prefix> ORDER BY embedding <=> $q LIMIT n
//
// with n = offset + limit + 1 when items have one vector, else (offset +
// limit) × (vectors per item, from the configured fields) × 2 + 1 (+10
// rather than +1 with a filter or TTLs), joined with the items by primary
// key in the same statement (one round trip, values only of the candidates
// that are live and pass the filter); the engine then ranks them, keeps
// each item's best field and pages. When too few candidates pass, it asks
// again for 4n (up to 1000) in a transaction that raises HNSW's ef_search
// to n and, under a prefix, turns on pgvector 0.8's iterative index scans,
// which keep looking until n candidates pass the prefix. When that cannot
// settle the page (fewer matches than the page needs, or items tied with
// the page's last one beyond the candidates), the engine ranks exactly:
// each item's best distance under the prefix, computed by pgvector in one
// query served by the prefix index (engine.ScoreTx), then the items
// without vectors in the no-query order. A search whose prefix spans
// several data subjects' vector spaces (per-subject keys) is always ranked
// that way, each vector against the query in its own space (a table of
// the spaces' queries joined by the subject's label), since the index
// orders by distance to one vector. Scores are cosine 1 - distance, l2
// -distance, inner product the dot product.
//
// Without a serializer, a search's filter also runs in SQL (JSONB
// operators, engine.FilterTx) and the engine checks every row again; with
// one, values are envelopes and filters run in Go after decryption.
//
// The plan must fit the prefix: the vector index for a broad one, the
// prefix's own rows for a selective one. A cached statement taking the
// prefix as a parameter gets a generic plan that cannot see which, and a
// generic plan chosen on selective prefixes scans every vector for broad
// ones. So with a pool in pgx's default exec mode (prepared statements
// cached per connection), search statements run as unnamed statements
// (QueryExecModeCacheDescribe), planned with their parameters each time,
// which costs about as much again as running the index-served query. A
// prefix searched again among the last 256 searched, and the empty prefix,
// get a cached statement with the prefix written into its text instead, as
// escape-string constants made only of hex escapes (no character of the
// prefix reaches the SQL text): planned once for that prefix (again after
// ANALYZE), it skips parsing and planning. Prefixes over 512 bytes, and
// non-ASCII prefixes on a server whose encoding is not UTF8, keep their
// parameters; so do pools in other exec modes (transaction poolers) and
// transactions.
//
// A search without a query orders items by updated_at descending, then by
// namespace and key (byte order).
//
// # Encryption
//
// With a Serde implementing serde.BoundSerializer (an encrypted
// serializer), store.value holds an envelope object
//
//	{"__memvault_enc__": 1, "t": "<type tag>", "d": "<base64 ciphertext>"}
//
// bound by associated data to the item's namespace and key:
// a ciphertext copied to another row fails with serde.ErrDecrypt. Vectors
// are computed from the plaintext before encryption. A strict encrypted
// serializer refuses plaintext rows (serde.ErrPlaintextRefused). Filters
// then run in Go after decryption (the store engine's filter engine),
// fetching rows in growing chunks until the page is full, so limit and
// offset stay exact. The engine's cache of decoded values, keyed by item
// and checked against the exact stored bytes, saves decryption and
// decoding of unchanged rows without ever serving a stale value
// (Options.CacheSize).
//
// What someone who can read the database (a backup, a replica, a DBA) sees
// and does not see with encryption on:
//   - Hidden: every value, its fields and their contents, and so what
//     filters match.
//   - Visible: namespaces and keys (primary keys, in the clear so that
//     prefixes can be searched), created_at, updated_at, expires_at and
//     ttl_minutes, the value's size, the names of embedded fields, and the
//     embeddings themselves. Embeddings leak meaning: texts can be
//     approximately recovered from them by inversion attacks, and similar
//     items are recognizable as such. Index only fields you can afford to
//     expose that way, or run without an index.
//   - Not prevented: deleting rows, or restoring an item's older
//     ciphertext at the same namespace and key (a rollback of that item).
//
// # Caches and TTL
//
// Query embeddings are cached (Options.QueryCacheSize, through
// embeddings.Cached). The store itself always reads the database, so it is
// never stale, even with other processes writing; for reads that skip the
// round trip, with staleness bounded by its MaxAge, wrap it in store/cache
// (cache.New(s, cache.Options{Now: sameClock})); neither the config
// package nor vault.Open does that for you. With a TTLConfig,
// Get and Search restart the TTL of what they return (unless refresh on read
// is off), omit_expired hides expired items from every read, and a sweeper
// goroutine deletes expired items every SweepInterval until Close. TTLs are
// kept in whole minutes (ttl_minutes) for refreshes, as in LangGraph.
//
// # Writes
//
// A Put, Delete or Batch sends all its rows as one pgx batch (one round
// trip, one implicit transaction; the fence of the keys that sealed the
// values first), or, from 256 items, by COPY into temporary tables. The
// upsert keeps created_at and moves updated_at forward itself (ON CONFLICT
// DO UPDATE), so nothing is read before a write; PutIf is one conditional
// statement. PutTx, PutBatchTx, PutIfTx and DeleteTx run the same engine on
// the driver bound to the caller's transaction, so a memory commits or
// rolls back with the caller's own rows.
//
// # Citus
//
// On a Citus coordinator (the citus extension exists in the database),
// Setup distributes store by prefix and store_vectors colocated with it,
// so that a namespace's items and vectors share a shard; a database set up
// before is distributed by the next Setup. Get, Put, Delete, PutIf and
// ListItems of one namespace then route to one shard; a Search (a
// namespace's descendants live on other shards), ListNamespaces,
// DeletePrefix and the TTL sweep run on every shard. The statements are
// those of plain PostgreSQL but for two differences (see "Citus" below).
// Keep plan_cache_mode at its default: forced generic plans are refused by
// Citus for the store's INSERT ... SELECT and search statements.
//
// # Citus
//
// On a Citus coordinator Setup distributes store by prefix and
// store_vectors by prefix, colocated with store: all the items of one
// namespace, and their vectors, live on one shard, so a statement naming
// one namespace (Get, Put, Delete, a Search or a listing of one whole
// namespace) routes to one shard, and the foreign key of store_vectors,
// which holds prefix, is enforced inside each shard. What names no single
// namespace fans out to every shard: a Search or listing under a shorter
// prefix, ListNamespaces, DeletePrefix of a shorter prefix and the TTL
// sweep.
//
// memvault_store_embedder (one row, read and written by Setup only) and
// the migration tables stay local tables of the coordinator: no statement
// joins them with the distributed tables, and a local table keeps plain
// PostgreSQL's semantics (its one INSERT ... ON CONFLICT; a reference
// table would make that write a two-phase commit to every node, for
// nothing).
//
// The statements are those of plain PostgreSQL, with two differences on
// Citus (driver.topo): statements that take their rows from arrays repeat
// their prefixes for shard pruning (pgcitus.Topology.ShardFilter), and the
// item lookup of a nearest-neighbour search goes without its LIMIT 1
// (annQuery).
package pgstore
