package pgstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/internal/envelope"
	"github.com/memvault/memvault/internal/pgdb"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/engine"
	"github.com/memvault/memvault/store/internal/items"
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
	// Values stored in more than 64 KiB, and data subjects' values, are not
	// kept. 0 means DefaultCacheSize, negative disables the cache.
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
// use and Close when done.
//
// Every store method is the store engine's (store/engine), on this
// package's store.Driver, which keeps only storage: SQL, the schema,
// pgvector's index and COPY. The driver declares what PostgreSQL does
// better than the engine's generic path, and the engine uses it: ranked
// candidates from pgvector (DriverCaps.ANN, engine.ANNTx), filters as
// JSONB conditions when values are plaintext (engine.FilterTx), upserts
// that keep created_at themselves (DriverCaps.UpsertVersions), the fence
// and conditional puts in SQL (engine.FenceTx, engine.CondTx), a batch's
// writes as one round trip or a COPY; the …Tx methods run the engine on
// the driver bound to the caller's transaction.
type Store struct {
	*engine.Engine
	d    *driver
	b    *items.Base // the engine's: TTL options, clock, closed state
	opts Options
}

// Store implements every store interface (items.Rotatable lists them).
var _ items.Rotatable = (*Store)(nil)

// New returns a Store using db. It does not touch the database: call Setup
// to create or migrate the tables. With a TTL config whose SweepInterval is
// not negative, a sweeper goroutine deletes expired items until Close.
func New(db DB, opts Options) (*Store, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: nil DB", store.ErrInvalidArgument)
	}
	d := &driver{db: db, t: newTables(opts.Schema), copyMin: defaultCopyMin, sealed: opts.Serde != nil}
	if opts.Serde != nil {
		d.codec = binding.New(opts.Serde)
	}
	if p, ok := db.(*pgxpool.Pool); ok && p != nil && p.Config().ConnConfig.DefaultQueryExecMode == pgx.QueryExecModeCacheStatement {
		d.mode = pgx.QueryExecModeCacheDescribe
		d.seenPrefixes, _ = lru.New[string, struct{}](seenPrefixesSize) // size > 0
	}
	var idx *store.IndexConfig
	if opts.Index != nil {
		// pgvector has rules of its own (see newIndexSpec).
		spec, err := newIndexSpec(*opts.Index, opts.ANN)
		if err != nil {
			return nil, err
		}
		d.index = spec
		c := spec.cfg
		c.Fields, c.Dims = spec.fields, spec.dims
		emb := &indexEmbedder{Embedder: c.Embedder, dims: spec.dims}
		if n := cmp.Or(opts.QueryCacheSize, DefaultQueryCacheSize); n > 0 {
			q, err := embeddings.NewCached(c.Embedder, n)
			if err != nil {
				return nil, fmt.Errorf("postgres: query cache: %w", err)
			}
			emb.query = q
		}
		c.Embedder = emb
		idx = &c
	}
	e, err := engine.New(d, engine.Options{Index: idx, TTL: opts.TTL, Serde: opts.Serde, Now: opts.Now,
		ValueCacheSize: cmp.Or(opts.CacheSize, DefaultCacheSize)})
	if err != nil {
		return nil, err
	}
	return &Store{Engine: e, d: d, b: items.EngineBase(e), opts: opts}, nil
}

// indexEmbedder is the index's embedder as the engine gets it: queries
// through the query cache (Options.QueryCacheSize), documents not, and the
// index's dimensions (an embedder may not know its own).
type indexEmbedder struct {
	embeddings.Embedder
	query *embeddings.Cached // nil: no query cache
	dims  int
}

func (e *indexEmbedder) Dims() int { return e.dims }

func (e *indexEmbedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if e.query != nil {
		return e.query.EmbedQuery(ctx, text)
	}
	return e.Embedder.EmbedQuery(ctx, text)
}

// pgTime is t as PostgreSQL's timestamptz keeps it: UTC, whole
// microseconds.
func pgTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// embedder returns the index embedder.
func (s *Store) embedder() embeddings.Embedder { return s.d.index.cfg.Embedder }
