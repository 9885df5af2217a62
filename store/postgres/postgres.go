package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/memvault/memvault/internal/envelope"
	"github.com/memvault/memvault/internal/pgdb"
	"github.com/memvault/memvault/store/internal/items"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
)

// Defaults of Options.
const (
	// DefaultCacheSize is the number of decoded values kept in memory when
	// Options.CacheSize is 0.
	DefaultCacheSize = 10000
	// DefaultQueryCacheSize is the number of query embeddings kept in memory
	// when Options.QueryCacheSize is 0.
	DefaultQueryCacheSize = 1000
	// halfvecThreshold: above this many dimensions vectors are stored as
	// halfvec, since pgvector indexes at most 2000 dimensions of vector.
	halfvecThreshold = 2000
)

// Sentinel errors of this package; they wrap the store package's sentinels
// where one applies.
var (
	// ErrEnvelope is returned when a stored value looks like an encrypted
	// envelope but the store has no serializer, or the envelope is malformed.
	// It is envelope.ErrMalformed.
	ErrEnvelope = envelope.ErrMalformed
	// ErrDims is returned when an embedder returns vectors of the wrong length.
	ErrDims = errors.New("postgres: embedding dimensions mismatch")
)

// DB is what the store needs from a connection pool. *pgxpool.Pool
// implements it.
type DB = pgdb.DB

// Querier runs statements; *pgxpool.Pool, *pgx.Conn and pgx.Tx implement it.
type Querier = pgdb.Querier

var _ DB = (*pgxpool.Pool)(nil)

// Options configures a Store. The zero value is usable: unqualified table
// names, no semantic index, no TTL, plain JSONB values, caches on.
type Options struct {
	// Schema qualifies every table ("schema".store); empty means unqualified
	// names resolved through the connection's search_path, as LangGraph does.
	Schema string
	// Index enables semantic search; nil means none (store_vectors is then
	// neither created nor written).
	Index *store.IndexConfig
	// ANN configures pgvector's index of store_vectors (HNSW by default);
	// it applies only with Index.
	ANN ANNConfig
	// TTL configures expiry, refresh on read, omit-expired reads and the
	// sweeper (every TTLConfig.SweepInterval, store.DefaultSweepInterval
	// when 0, none when negative). nil means no TTLs: a put WithTTL fails
	// with store.ErrNoTTL, reads never write, and no sweeper runs.
	TTL *store.TTLConfig
	// Serde encodes values. nil stores plain JSONB (readable by LangGraph).
	// A serializer whose tag for a value is "json" is stored as plain JSONB
	// too; any other tag (an encrypted one, "json+aes...") is stored as an
	// envelope object bound to the item's namespace and key. With a Serde,
	// search filters run in Go on the decoded values (the store core's filter engine),
	// since SQL cannot see inside envelopes.
	Serde serde.Serializer
	// CacheSize is the number of decoded (and decrypted) values kept to
	// skip decoding unchanged rows: an entry is used only when the stored
	// bytes are exactly those it was decoded from, so it is never stale.
	// Values stored in more than 64 KiB are not kept. 0 means
	// DefaultCacheSize, negative disables the cache.
	CacheSize int
	// QueryCacheSize is the number of query embeddings kept; 0 means
	// DefaultQueryCacheSize, negative disables the cache.
	QueryCacheSize int
	// Now is the clock used for created_at, updated_at and expiry; nil means
	// time.Now.
	Now func() time.Time
}

// Store is a store.Store on PostgreSQL, in LangGraph's store / store_vectors
// tables. It is safe for concurrent use. Call Setup once per database before
// use and Close when done. ListItems (store.Lister) and DeletePrefix
// (store.PrefixDeleter) are the store core's, around this store's queries.
type Store struct {
	*front             // ListItems, DeletePrefix (Get, Put, … are the store's own)
	b      *items.Base // TTL options, clock, closed state, sweeper
	db     DB
	opts   Options
	codec  binding.Codec // opts.Serde, binding values to their item (nil Serde: unused)
	t      tables
	index  *indexSpec         // nil without an index
	values *valueCache        // nil when disabled or without Serde
	query  *embeddings.Cached // query embeddings; nil when disabled or without index

	iterative  atomic.Int32 // pgvector iterative scans: 0 unknown, 1 yes, 2 no
	utf8Server atomic.Int32 // server_encoding is UTF8: 0 unknown, 1 yes, 2 no
	// mode is the exec mode of search queries (0: the pool's own). A
	// pool that caches prepared statements gets QueryExecModeCacheDescribe
	// instead: unnamed statements are planned with their parameters every
	// time, where a cached statement's generic plan cannot see how
	// selective a namespace prefix is and may scan every vector.
	mode pgx.QueryExecMode
	// exactSearches counts the searches the index could not settle,
	// which ran the exact query (for tests).
	exactSearches atomic.Int64
	// copyMin is how many items a write puts before it goes through COPY
	// (see writeBulk): defaultCopyMin; tests lower it to run the
	// conformance suite through the bulk path.
	copyMin int
	// seenPrefixes holds the prefixes searched lately, to tell the ones
	// searched again (see preparedPrefix); nil when mode is 0.
	seenPrefixes *lru.Cache[string, struct{}]
}

// front is the store core's side of the store's methods; the store's own
// Get, Put, Delete, Search and ListNamespaces (fused PostgreSQL paths)
// take precedence over its one-op batches.
type front = items.Front

// Store implements every store interface (items.Rotatable lists them).
var _ items.Rotatable = (*Store)(nil)

// New returns a Store using db. It does not touch the database: call Setup
// to create or migrate the tables. With a TTL config whose SweepInterval is
// not negative, a sweeper goroutine deletes expired items until Close.
func New(db DB, opts Options) (*Store, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: nil DB", store.ErrInvalidArgument)
	}
	// The index is resolved here (pgvector has rules of its own, see
	// newIndexSpec); the core checks the TTL options.
	b, err := items.NewBase("postgres", nil, opts.TTL, opts.Now)
	if err != nil {
		return nil, err
	}
	s := &Store{b: b, db: db, opts: opts, t: newTables(opts.Schema), copyMin: defaultCopyMin}
	if opts.Serde != nil {
		s.codec = binding.New(opts.Serde)
	}
	if p, ok := db.(*pgxpool.Pool); ok && p != nil && p.Config().ConnConfig.DefaultQueryExecMode == pgx.QueryExecModeCacheStatement {
		s.mode = pgx.QueryExecModeCacheDescribe
		s.seenPrefixes, _ = lru.New[string, struct{}](seenPrefixesSize) // size > 0
	}
	if opts.Index != nil {
		spec, err := newIndexSpec(*opts.Index, opts.ANN)
		if err != nil {
			return nil, err
		}
		s.index = spec
		if n := cacheSize(opts.QueryCacheSize, DefaultQueryCacheSize); n > 0 {
			c, err := embeddings.NewCached(opts.Index.Embedder, n)
			if err != nil {
				return nil, fmt.Errorf("postgres: query cache: %w", err)
			}
			s.query = c
		}
	}
	if n := cacheSize(opts.CacheSize, DefaultCacheSize); n > 0 {
		s.values = newValueCache(n)
	}
	b.Config.Index = s.indexConfig()
	b.Config.UseSerializer(opts.Serde)
	s.front = items.NewFront(b, items.Hooks{Batch: s.Batch, ListItems: s.listItems, DeletePrefix: s.deletePrefix})
	b.StartSweeper(s.Sweep)
	return s, nil
}

func cacheSize(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}

// Close stops the sweeper. It does not close the DB, which the caller owns.
// Calls after the first do nothing; the store refuses work once closed.
func (s *Store) Close() error { return s.b.Close(nil) }

// Sweep deletes the items whose expiry has passed (by Options.Now) and
// returns how many it deleted. The sweeper goroutine calls it; callers may
// too, for example from their own scheduler with SweepInterval negative.
func (s *Store) Sweep(ctx context.Context) (int, error) {
	if err := s.b.Check(ctx); err != nil {
		return 0, err
	}
	tag, err := s.db.Exec(ctx, s.t.sweep, s.nowUTC())
	if err != nil {
		return 0, fmt.Errorf("postgres: sweep: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// nowUTC is the store clock truncated to PostgreSQL's microsecond precision.
func (s *Store) nowUTC() time.Time { return pgTime(s.b.Now()) }

// pgTime is t as PostgreSQL's timestamptz keeps it: UTC, whole
// microseconds.
func pgTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// embedder returns the index embedder.
func (s *Store) embedder() embeddings.Embedder { return s.index.cfg.Embedder }

// indexConfig is the index as the write core (store/internal/items) takes
// it: the fields resolved, nil without an index.
func (s *Store) indexConfig() *store.IndexConfig {
	if s.index == nil {
		return nil
	}
	c := s.index.cfg
	c.Fields, c.Dims = s.index.fields, s.index.dims
	return &c
}

// iterativeScans reports whether the server's pgvector (0.8 or later) has
// iterative index scans; it asks once.
func (s *Store) iterativeScans(ctx context.Context) bool {
	switch s.iterative.Load() {
	case 1:
		return true
	case 2:
		return false
	}
	var ok bool
	err := s.db.QueryRow(ctx, `SELECT coalesce(string_to_array(extversion, '.')::int[] >= '{0,8}', false)
FROM pg_extension WHERE extname = 'vector'`).Scan(&ok)
	if err != nil {
		return false // ask again next time
	}
	if ok {
		s.iterative.Store(1)
	} else {
		s.iterative.Store(2)
	}
	return ok
}

// serverUTF8 reports whether the server encoding is UTF8; it asks once.
func (s *Store) serverUTF8(ctx context.Context) bool {
	switch s.utf8Server.Load() {
	case 1:
		return true
	case 2:
		return false
	}
	var ok bool
	if err := s.db.QueryRow(ctx, `SELECT current_setting('server_encoding') = 'UTF8'`).Scan(&ok); err != nil {
		return false // ask again next time
	}
	if ok {
		s.utf8Server.Store(1)
	} else {
		s.utf8Server.Store(2)
	}
	return ok
}
