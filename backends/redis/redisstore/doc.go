// Package redisstore is a memvault store (store.Store, LangGraph's
// BaseStore contract) on plain Redis data types — hashes, sorted sets and
// strings, plus Redis 8's vector sets where the server has them — so that
// it runs wherever Redis does: no RedisJSON, no RediSearch.
//
//	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
//	st, err := redisstore.New(ctx, rdb, redisstore.Options{
//		Index: &store.IndexConfig{Embedder: emb},
//		TTL:   &store.TTLConfig{DefaultTTL: 30 * 24 * time.Hour},
//		Serde: encrypted,
//	})
//
// Store is the store engine (store/engine) on this package's
// store.Driver: every rule of the Store contract (checks, TTLs and their
// refresh, filters, scoring, ordering, paging, conditional puts, the
// erasure fence, encoding and sealing values, rotating vectors into their
// data subject's space) is the engine's; this package stores and returns
// rows.
//
// # Layout
//
// Every key of a store starts with the hash tag {Prefix} (Options.Prefix,
// "memvault:store" by default), so a whole store lives in one slot: its
// scripts run on one node of a cluster, and prefix searches and namespace
// listing need no fan-out across masters. A row is named by its id, its
// namespace (labels joined with '.') followed by a NUL byte and its key
// (neither holds a NUL):
//
//	{P}:r:<id>  hash   v value column (JSON, or an envelope sealed to the
//	                   item by the serializer), c created, u updated,
//	                   e expires (Unix ns, 0: never), t TTL minutes,
//	                   x the item's vectors (count; per vector its field,
//	                   norm and float32s, little-endian), n their count,
//	                   q and f their codes' sign and fine parts (the code
//	                   index's, store/vecindex), h the item's coverage hash
//	{P}:k       zset   every row id, score 0: ZRANGEBYLEX gives the rows
//	                   of a namespace prefix ([ns NUL, ns \x01) and
//	                   [ns '.', ns '/')) and a namespace's keys in order
//	{P}:m       hash   row id -> "updated expires hasVectors": what
//	                   listing, ordering and expiry read without values
//	{P}:x       zset   row ids with an expiry, by expiry (ms, rounded up)
//	{P}:vs      vector set (Redis 8): element <id> NUL <i> for vector i
//	                   of the row, attributes {"p": [tags]} where each tag
//	                   is a hash of one prefix of the row's namespace
//	{P}:ix      hash   the code index's state: generation, the codes'
//	                   generation, log floor, centre, coverage, snapshot
//	{P}:ixl     zset   row ids by the last generation that changed them
//	{P}:ixs     list   the code index's snapshot parts
//	{P}:lock    string the write lock: a lease holding a transaction's
//	                   token
//	{P}:done:<token>   string, for 10 minutes: that transaction committed
//	                   (a commit sent again by the client is a no-op)
//	{P}:embedder hash  name and dims of the embedder that made the
//	                   vectors (a store with another is refused:
//	                   store.ErrEmbedderMismatch)
//
// # Transactions
//
// A write transaction takes the store's lock (SET NX with a lease,
// Options.Lease, renewed every lease/3 while the transaction runs, only
// while the lock still holds its token), keeps its changes in memory (its own reads see them)
// and sends them at Commit as one Lua script that first checks the lock
// still holds its token, then applies every change and releases the
// lock: all of a transaction's changes become visible at once, or none
// (a lease that ran out fails the commit with ErrLeaseLost, writing
// nothing). Write transactions of all processes on a store are thus
// serialized; the engine checks the erasure fence under the lock. A
// read-only transaction takes no lock: each of its reads is one script,
// atomic by itself, but two reads of one search may see a write commit
// between them (as separate queries would), which can only drop an item
// deleted meanwhile from a page.
//
// # Semantic search
//
// On Redis 8 (vector sets detected at New with COMMAND INFO VADD) with a
// cosine index, every vector of the index's dimensions is also added to
// the store's vector set, and a search under one vector space asks VSIM
// for candidates (FILTER `"tag" in .p` for its namespace prefix), reads
// their rows in one script and scores each candidate exactly from the
// float32s in the row (VSIM's own scores come from 8-bit quantized copies).
// How many candidates, when to widen and when to rank exactly instead are
// the engine's (engine.ANNPolicy).
//
// Every other search with a query — on Redis 7, with Options.NoVectorSets,
// with an L2 or inner-product index, and across several data subjects'
// vector spaces — ranks by memvault's vector index (store/vecindex,
// driven by the engine): each vector's code (sign bits and an 8-bit fine
// part) is written beside it in the item's hash by the commit script
// that writes the item, so an item and its codes never disagree, and
// the generation, change log and coverage the index follows are written
// by that same script. A process keeps the sign codes in memory
// (Options.VectorIndexBytes), follows other processes' commits through
// the log, reads the fine parts of the few candidates they leave and
// scores exactly only the best; a store whose vectors fit 32 MiB scores
// every vector from an exact in-process copy instead. The codes are
// centred on the vectors' mean once 1 024 items have codes (one recode,
// holding the lock; searches meanwhile rank exactly), and rows written
// before codes existed are coded when a store with an index opens.
//
// Vectors are stored as the engine hands them, like every backend's: in
// the data subject's rotated space when the serializer keeps per-subject
// keys, and from the keyed embedder when encryption is on — never a
// vector a plaintext embedding could be compared with once the subject's
// keys are gone. The vector set holds the same vectors, quantized, and
// the codes are computed from them: they tell nothing the stored vectors
// do not.
//
// # TTL
//
// Expiry is memvault's: the engine computes expiries and refreshes them
// on reads, hides expired items, and its sweeper deletes them through the
// expiry set ({P}:x) in a write transaction, with their vectors and
// vector set elements. Redis key expiry is not used: it would delete an
// item's hash but leave its header, its row id and its vector set
// elements behind.
//
// # Cluster
//
// Through a *redis.ClusterClient a store works unchanged: all its keys
// share one slot, hence one master, so a store does not spread over the
// cluster. Spread several stores (different prefixes: a tenant each, say)
// instead.
package redisstore
