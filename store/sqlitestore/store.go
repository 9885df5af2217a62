package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/memvault/memvault/internal/sqlitedb"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/engine"
	"github.com/memvault/memvault/store/internal/items"
	"github.com/memvault/memvault/store/vecindex"
)

// Options configures a Store. The zero value is a store without semantic
// search or TTLs, with plain JSON values, on the system clock.
type Options struct {
	// Index enables semantic search; nil disables it (queries are then
	// ignored and searches list items newest first). Searches rank by the
	// code index and score the best exactly (pgvector's index settings
	// are store/pgstore's Options.ANN).
	Index *store.IndexConfig
	// TTL enables expiry; nil means puts may not carry a TTL
	// (store.ErrNoTTL) and no sweeper runs.
	TTL *store.TTLConfig
	// Serde, when set, encodes item values: the value column then holds an
	// envelope {"t": type tag, "d": base64 payload}, bound to the item's
	// namespace and key by a serde.BoundSerializer such as
	// an encrypting one. Filters then run in Go after decoding. nil stores
	// plain JSON, readable by any SQLite client.
	Serde serde.Serializer
	// Now is the clock of every timestamp and expiry; nil means time.Now.
	Now func() time.Time
	// FullSync makes a database opened by Open sync its write-ahead log on
	// every commit (durable against power loss, not only process crashes).
	// The first Open of a file decides; New ignores it.
	FullSync bool
	// VectorCacheBytes bounds the in-memory search index: a sign code per
	// stored vector (d/8 + 16 bytes, 208 at 1536 dimensions) and its
	// 5-bit middle part (5d/8 + 8 bytes, 968 at 1536 dimensions, held
	// outside the Go heap) plus the item keys; searches rank items by it,
	// then read and score exactly only the best few vectors. 0 means
	// DefaultVectorCacheBytes, negative disables the index. When the index
	// does not fit, it drops the middle parts (searches inside dense
	// topics then read more fine parts from SQLite); when the sign codes
	// alone do not fit, every search scans the vectors in SQLite exactly.
	VectorCacheBytes int64
}

// DefaultVectorCacheBytes is the default Options.VectorCacheBytes.
const DefaultVectorCacheBytes = vecindex.DefaultBytes

// FloatCacheBytes is how many bytes of vectors a store keeps as an exact,
// in-process float32 copy: a store whose vectors fit (10 000 of 256
// dimensions take 10 MiB) scores every vector in memory, at memory speed,
// instead of ranking by the code index. The code index pays off on large
// stores of dense vectors; 1-bit codes of small, low-dimension or sparse
// vectors (the offline hashing embedder's) bound scores too loosely, and
// such a search read about every vector from SQLite (40 ms over 10 000 ×
// 256 against 1-2 ms in memory).
const FloatCacheBytes = 32 << 20

// floatBudget is FloatCacheBytes, a variable so that the tests of the code
// index can turn the copy off.
var floatBudget int64 = FloatCacheBytes

// Store is a store.Store on a SQLite database, safe for concurrent use, also
// by several processes on one file. Close stops its TTL sweeper and the
// search index's reading of the snapshot's middle parts, if under way.
//
// Every method of the Store contract is the store engine's
// (store/engine) on this package's store.Driver, which keeps only
// storage: the SQL of the tables, their transactions and the code index's
// tables (codes, change log, snapshot, coverage). Reencrypt, Reembed and
// DrainWrites are this package's, in SQL.
type Store struct {
	*engine.Engine
	db    *sqlitedb.DB
	d     *driver
	serde serde.Serializer
	// cache is the engine's code index (nil without an index), for tests.
	cache *vecindex.Cache
}

// Store implements every store interface (items.Rotatable lists them).
var _ items.Rotatable = (*Store)(nil)

// Open opens (creating it if needed) the database file at path, sets up
// the store's tables and returns a store on it. A checkpointer/sqlitesaver saver
// opened on the same file shares its connections. The store reads the file
// without SQLite's memory map (see sqlitedb.Options.NoMmap) when it opens
// it first; a saver that opened it first decides for both (vault opens its
// saver with checkpointer/sqlitesaver.Options.NoMmap). path ":memory:" gives a
// private in-memory database (for tests).
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	// No memory map: a search reads a few pages scattered over a large
	// file (the snapshot, the fine parts and the vectors of the items it
	// bounds and scores), and a fault in the map read megabytes ahead
	// around each of them — from a cold page cache 64 of the 117 MB the
	// first search at 100 000 × 1 536 read — and counted them in the
	// process's memory (sqlitedb.Options.NoMmap).
	o := sqlitedb.Options{NoMmap: true}
	if opts.FullSync {
		o.Synchronous = sqlitedb.SyncFull
	}
	db, err := sqlitedb.Open(path, o)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	s, err := newStore(ctx, db, opts)
	if err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// New returns a store on db, a database opened with the "sqlite" driver of
// modernc.org/sqlite, after setting up its tables. The caller keeps owning
// db (Close does not close it) and chooses its pragmas; open it with
// "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)"
// for concurrent readers and writers.
func New(ctx context.Context, db *sql.DB, opts Options) (*Store, error) {
	h := sqlitedb.Wrap(db)
	s, err := newStore(ctx, h, opts)
	if err != nil {
		h.Close()
		return nil, err
	}
	return s, nil
}

func newStore(ctx context.Context, db *sqlitedb.DB, opts Options) (*Store, error) {
	if err := db.Migrate(ctx, component, migrations); err != nil {
		return nil, fmt.Errorf("sqlite: setup: %w", err)
	}
	if err := dropOldVectors(ctx, db); err != nil {
		return nil, err
	}
	st, err := prepare(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("sqlite: setup: %w", err)
	}
	d := &driver{db: db, st: st, codes: opts.Index != nil, ttl: opts.TTL != nil}
	floats := int64(0)
	if opts.VectorCacheBytes >= 0 {
		floats = floatBudget
	}
	e, err := engine.New(d, engine.Options{Index: opts.Index, TTL: opts.TTL, Serde: opts.Serde, Now: opts.Now,
		VectorIndexBytes: opts.VectorCacheBytes, FloatBytes: floats})
	if err != nil {
		st.close()
		return nil, err
	}
	s := &Store{Engine: e, db: db, d: d, serde: opts.Serde, cache: engine.IndexCache(e)}
	if err := s.checkEmbedder(ctx); err != nil {
		s.Close()
		return nil, err
	}
	if err := engine.SyncCodes(ctx, e); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// DrainWrites returns once every write transaction on the file that began
// before it (in any process) has finished: it takes the write lock once.
// An erasure calls it after destroying a subject's keys, so that the items
// it then deletes include every put that found those keys live (puts check
// them holding the lock: binding.Fence).
func (s *Store) DrainWrites(ctx context.Context) error {
	if err := s.db.Write(ctx, func(*sql.Tx) error { return nil }); err != nil {
		return fmt.Errorf("sqlite: drain writes: %w", err)
	}
	return nil
}
