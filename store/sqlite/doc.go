// Package sqlite is memvault's embedded store: a store.Store on a single
// SQLite file, with no server and no cgo (modernc.org/sqlite), so that an
// agent's long-term memory survives restarts on a laptop.
//
//	st, err := sqlite.Open(ctx, "agent.db", sqlite.Options{
//		Index: &store.IndexConfig{Embedder: embeddings.NewHashing(256)},
//		TTL:   &store.TTLConfig{DefaultTTL: 30 * 24 * time.Hour},
//	})
//	...
//	defer st.Close()
//
// # Tables
//
// The tables mirror LangGraph's PostgreSQL store: store(prefix, key,
// value, created_at, updated_at, expires_at, ttl_minutes) keyed by
// (prefix, key), the namespace stored as its labels joined with '.', and
// store_vectors(prefix, key, field_name, embedding, ...) with a foreign key
// to store that cascades deletes. Values are JSON text; embeddings are
// little-endian float32 blobs; timestamps are Unix nanoseconds computed in
// Go from Options.Now. The schema is versioned in memvault_migrations
// (component "store"). A checkpointer/sqlite saver opened on the same file
// shares the connections (one writer, concurrent readers, WAL).
//
// # Values and encryption
//
// Without Options.Serde the value column is the plain JSON object. With a
// serializer it is an envelope {"t": type tag, "d": base64 payload}, bound
// by a serde.BoundSerializer (serde.Encrypted) to its (namespace,
// key): a row copied to another namespace or key does not decrypt. Filters
// are then evaluated in Go after decryption, and paging stays exact.
// Namespaces, keys, timestamps and vectors stay in plaintext.
//
// # Search
//
// Namespace prefixes are matched on the stored text with a byte range
// (prefix = 'a.b' OR 'a.b.' <= prefix < 'a.b/'), which is exact, needs no
// LIKE escaping, respects case and uses the primary key. Searches without
// a query order by updated_at descending, then namespace and key. Filters
// (the store core's filter engine: numbers compare as numbers) run in Go.
//
// A search with a query is an exact scan: every vector under the prefix is
// scored (cosine, L2 or inner product, as index.Score), each item keeps its
// best field, items with vectors come first by score, then the others in
// the no-query order, and offset and limit apply to that combined list. The
// vectors are scored from an in-memory copy, one contiguous float32 array
// (Options.VectorCacheBytes, 256 MiB by default), that every item-changing
// transaction keeps coherent through a generation counter in the database:
// writes of this process update it in place, a write by another process
// makes the next search reload it. Without the cache (or when the vectors
// do not fit) each search reads the vectors from SQLite.
//
// A search costs time linear in items × dimensions (OpenAI's 1536
// dimensions cost six times 256), and a reload after another process wrote
// reads every vector again; the README has current figures. Exact scan
// suits stores of up to about 100 000 items of 256 dimensions in a process
// that does most of the writing. Beyond that, or with several processes
// writing while others search, use store/postgres and its pgvector index.
//
// # TTL
//
// TTLs are kept in whole minutes as in LangGraph (items.TTLMinutes), the
// expiry computed from Options.Now. Reads refresh TTLs when configured
// (store.TTLConfig), omit-expired reads hide expired items, and a sweeper
// goroutine deletes them every SweepInterval until Close.
package sqlite
