package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/memvault/memvault/store/internal/items"
	"github.com/memvault/memvault/store/internal/vecindex"

	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/internal/sqlitedb"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
)

// Options configures a Store. The zero value is a store without semantic
// search or TTLs, with plain JSON values, on the system clock.
type Options struct {
	// Index enables semantic search; nil disables it (queries are then
	// ignored and searches list items newest first). Searches rank by the
	// code index and score the best exactly (pgvector's index settings
	// are store/postgres's Options.ANN).
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
	// stored vector (d/8 + 16 bytes, 208 at 1536 dimensions) plus the item
	// keys; searches rank items by it, then read and score exactly only
	// the best few vectors. 0 means DefaultVectorCacheBytes, negative
	// disables the index. When the index does not fit, every search scans
	// the vectors in SQLite exactly.
	VectorCacheBytes int64
}

// Store is a store.Store on a SQLite database, safe for concurrent use, also
// by several processes on one file. Close stops its TTL sweeper.
//
// Get, Put, Delete, Search and ListNamespaces are the store core's, one-op
// batches of Batch (see store.Store for their contract), and so are
// ListItems (store.Lister) and DeletePrefix (store.PrefixDeleter), around
// this store's storage operations.
type Store struct {
	*front
	b      *items.Base // options, clock, closed state, sweeper
	db     *sqlitedb.DB
	index  *store.IndexConfig // b.Index: nil without index
	ttl    *store.TTLConfig   // b.TTL
	serde  serde.Serializer
	codec  binding.Codec   // serde, binding values to their item (nil serde: unused)
	cache  *vecindex.Cache // the code index
	floats *floatCache     // the exact copy of a small store's vectors
	st     *stmts
}

// Store implements every store interface (items.Rotatable lists them).
var _ items.Rotatable = (*Store)(nil)

// front is the store core's side of the public methods (items.Front).
type front = items.Front

// Open opens (creating it if needed) the database file at path, sets up
// the store's tables and returns a store on it. A checkpointer/sqlitesaver saver
// opened on the same file shares its connections. path ":memory:" gives a
// private in-memory database (for tests).
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	o := sqlitedb.Options{}
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
	b, err := items.NewBase("sqlite", opts.Index, opts.TTL, opts.Now)
	if err != nil {
		return nil, err
	}
	b.UseSerializer(opts.Serde)
	s := &Store{b: b, db: db, index: b.Index, ttl: b.TTL, serde: opts.Serde, codec: codecOf(opts.Serde)}
	s.front = items.NewFront(b, items.Hooks{Batch: s.Batch, ListItems: s.listItems, DeletePrefix: s.deletePrefix})
	budget, dims := opts.VectorCacheBytes, 0
	switch {
	case s.index == nil || budget < 0:
		budget = 0
	case budget == 0:
		budget = DefaultVectorCacheBytes
	}
	if s.index != nil {
		dims = s.index.Dims
	}
	s.cache = vecindex.New(budget, dims)
	if budget > 0 {
		s.floats = newFloatCache(floatBudget, dims)
	} else {
		s.floats = newFloatCache(0, dims)
	}
	if err := db.Migrate(ctx, component, migrations); err != nil {
		return nil, fmt.Errorf("sqlite: setup: %w", err)
	}
	if err := s.checkEmbedder(ctx); err != nil {
		return nil, err
	}
	st, err := prepare(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("sqlite: setup: %w", err)
	}
	s.st = st
	if err := s.syncCodes(ctx); err != nil {
		st.close()
		return nil, err
	}
	b.StartSweeper(s.Sweep)
	return s, nil
}

// Close stops the sweeper, releases the database handle and makes every
// later call fail with store.ErrClosed. It is safe to call more than once.
func (s *Store) Close() error {
	return s.b.Close(func() error {
		s.st.close()
		return s.db.Close()
	})
}

// Sweep deletes the items whose expiry is before the store's current time
// (and their vectors) and returns how many it deleted.
func (s *Store) Sweep(ctx context.Context) (int, error) {
	if err := s.b.Check(ctx); err != nil {
		return 0, err
	}
	now := s.b.Now().UnixNano()
	var n int64
	err := s.db.Write(ctx, func(tx *sql.Tx) error {
		cw, err := s.beginCodes(ctx, tx)
		if err != nil {
			return err
		}
		// The swept items go to the log, so that every process's search
		// index drops them.
		rs, err := tx.QueryContext(ctx, `SELECT prefix, key FROM store WHERE expires_at IS NOT NULL AND expires_at < ?`, now)
		if err != nil {
			return err
		}
		for rs.Next() {
			var k itemKey
			if err := rs.Scan(&k.NS, &k.Key); err != nil {
				rs.Close()
				return err
			}
			cw.keys = append(cw.keys, k)
		}
		rs.Close()
		if err := rs.Err(); err != nil || len(cw.keys) == 0 {
			return err
		}
		// The items whose code rows go leave the codes' coverage.
		gone, err := tx.QueryContext(ctx, `DELETE FROM store_vector_codes WHERE (prefix, key) IN
			(SELECT prefix, key FROM store WHERE expires_at IS NOT NULL AND expires_at < ?) RETURNING prefix, key`, now)
		if err != nil {
			return err
		}
		seen := map[itemKey]bool{}
		for gone.Next() {
			var k itemKey
			if err := gone.Scan(&k.NS, &k.Key); err != nil {
				gone.Close()
				return err
			}
			if !seen[k] {
				seen[k] = true
				cw.cov.Cov.Sub(itemHash(k))
			}
		}
		gone.Close()
		if err := gone.Err(); err != nil {
			return err
		}
		// Explicit, in case a wrapped database runs without foreign keys.
		if _, err := tx.ExecContext(ctx, `DELETE FROM store_vectors WHERE (prefix, key) IN
			(SELECT prefix, key FROM store WHERE expires_at IS NOT NULL AND expires_at < ?)`, now); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM store WHERE expires_at IS NOT NULL AND expires_at < ?`, now)
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		cw.deleted = true
		_, err = s.finishCodes(ctx, tx, cw)
		return err
	})
	if n > 0 {
		s.floats.invalidate()
	}
	if err != nil {
		return 0, fmt.Errorf("sqlite: sweep: %w", err)
	}
	return int(n), nil
}

// mayExpire reports whether items of this store may carry an expiry, so
// that the vector scan must skip expired ones (every read also checks the
// expiry of the items it returns, whatever the configuration).
func (s *Store) mayExpire() bool { return s.ttl != nil }

// codecOf returns the codec of s, or the zero codec when there is none.
func codecOf(s serde.Serializer) binding.Codec {
	if s == nil {
		return binding.Codec{}
	}
	return binding.New(s)
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
