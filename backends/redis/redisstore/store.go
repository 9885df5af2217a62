package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/reencrypt"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/engine"
)

// ErrRecord is wrapped by the errors of stored records the store cannot
// read (written by something else under its prefix, or damaged).
var ErrRecord = errors.New("redis: unreadable record")

// ErrOptions is wrapped by the error of unusable Options.
var ErrOptions = errors.New("redis: invalid options")

// DefaultPrefix is the key prefix when Options.Prefix is "".
const DefaultPrefix = "memvault:store"

// DefaultLease is the write lock's lease when Options.Lease is 0.
const DefaultLease = 30 * time.Second

// DefaultCacheSize is how many opened values a store keeps when
// Options.CacheSize is 0 (each checked against the stored bytes before
// use, so another process's write is never missed).
const DefaultCacheSize = 1024

// Options configures a Store. The zero value is a store without semantic
// search or TTLs, with plain JSON values, on the system clock.
type Options struct {
	// Prefix names the store: its keys are "{Prefix}:…", one hash tag, so
	// the whole store lives in one slot of a cluster (DefaultPrefix when
	// ""). Stores with different prefixes share a server without seeing
	// each other. It may not hold '{' or '}'.
	Prefix string
	// Index enables semantic search; nil disables it.
	Index *store.IndexConfig
	// TTL enables expiry; nil means puts may not carry a TTL
	// (store.ErrNoTTL) and no sweeper runs.
	TTL *store.TTLConfig
	// Serde, when set, encodes item values (see store.Driver): an
	// encrypting serializer seals each to its namespace and key.
	Serde serde.Serializer
	// Now is the clock of every timestamp and expiry; nil means time.Now.
	Now func() time.Time
	// Lease is how long a write transaction holds the store's lock
	// without renewing it (DefaultLease when 0). It is renewed every
	// Lease/3 while the transaction runs, so it only matters when the
	// process dies or stalls: a process that dies holding it blocks the
	// store's writers that long, and a transaction stalled past it fails
	// at Commit with ErrLeaseLost and writes nothing.
	Lease time.Duration
	// NoVectorSets keeps semantic search off Redis 8's vector sets even
	// where the server has them: searches then score every vector under
	// their prefix exactly, as on Redis 7.
	NoVectorSets bool
	// CacheSize is how many opened values the store keeps
	// (DefaultCacheSize when 0; negative: none).
	CacheSize int
	// VectorIndexBytes bounds memvault's in-process vector index (sign
	// codes kept beside each item's vectors; store/vecindex), which ranks
	// the searches vector sets do not serve: on Redis 7, with
	// NoVectorSets, with an L2 or inner-product index, and across several
	// data subjects' vector spaces. 0 means vecindex.DefaultBytes (256
	// MiB); negative turns it off (codes are still written, and those
	// searches score every vector under their prefix).
	VectorIndexBytes int64
}

// Store is a store.Store on a Redis server or cluster, in the layout of
// the package doc; safe for concurrent use, also by several processes on
// one prefix. Close stops its TTL sweeper; it does not close the client.
type Store struct {
	*engine.Engine
	d *driver
}

// New returns a store under opt.Prefix through rdb (a *redis.Client, a
// *redis.ClusterClient or any other UniversalClient). Nothing needs
// setting up on the server; New asks it whether it has vector sets.
func New(ctx context.Context, rdb redis.UniversalClient, opt Options) (*Store, error) {
	return open(ctx, rdb, opt, floatBudget)
}

// open is New with an exact float copy of floats bytes (tests turn it
// off, so that searches rank by the code index).
func open(ctx context.Context, rdb redis.UniversalClient, opt Options, floats int64) (*Store, error) {
	if rdb == nil {
		return nil, fmt.Errorf("%w: no client", ErrOptions)
	}
	prefix := opt.Prefix
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if strings.ContainsAny(prefix, "{}") {
		return nil, fmt.Errorf("%w: prefix %q holds '{' or '}'", ErrOptions, prefix)
	}
	lease := opt.Lease
	if lease == 0 {
		lease = DefaultLease
	}
	if lease < 30*time.Millisecond {
		return nil, fmt.Errorf("%w: lease %v is shorter than 30ms", ErrOptions, lease)
	}
	d := &driver{rdb: rdb, k: newKeys(prefix), lease: lease, sem: make(chan struct{}, 1), codes: opt.Index != nil}
	if opt.Index != nil {
		d.dims = opt.Index.Dims
		if d.dims == 0 && opt.Index.Embedder != nil {
			d.dims = opt.Index.Embedder.Dims()
		}
	}
	// Vector sets rank by cosine similarity only: a store of another
	// distance ranks by the code index.
	if opt.Index != nil && !opt.NoVectorSets && (opt.Index.Distance == "" || opt.Index.Distance == store.Cosine) {
		ok, err := hasVectorSets(ctx, rdb)
		if err != nil {
			return nil, err
		}
		d.vsets = ok && d.dims > 0
	}
	if err := checkEmbedder(ctx, d, opt.Index); err != nil {
		return nil, err
	}
	cache := opt.CacheSize
	switch {
	case cache == 0:
		cache = DefaultCacheSize
	case cache < 0:
		cache = 0
	}
	if opt.VectorIndexBytes < 0 {
		floats = 0
	}
	e, err := engine.New(d, engine.Options{Index: opt.Index, TTL: opt.TTL, Serde: opt.Serde, Now: opt.Now, ValueCacheSize: cache,
		VectorIndexBytes: opt.VectorIndexBytes, FloatBytes: floats})
	if err != nil {
		return nil, err
	}
	s := &Store{Engine: e, d: d}
	// Rows an older build wrote have no codes: code them once.
	if err := engine.SyncCodes(ctx, e); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// VectorSets reports whether searches with a query rank through the
// server's vector set (Redis 8, a cosine index, Options.NoVectorSets
// unset).
func (s *Store) VectorSets() bool { return s.d.vsets }

// DrainWrites returns once every write transaction on the store that began
// before it (in any process) has finished: it takes the write lock once.
// An erasure calls it after destroying a subject's keys, so that the items
// it then deletes include every put that found those keys live (puts check
// them holding the lock).
func (s *Store) DrainWrites(ctx context.Context) error {
	tx, err := s.d.Begin(ctx, true)
	if err != nil {
		return fmt.Errorf("redis: drain writes: %w", err)
	}
	return tx.Rollback()
}

// Reencrypt implements store.Reencrypter: every item value not sealed
// under the serializer's primary key (or still plaintext, when the
// serializer reads plaintext) is sealed again, bound to its namespace and
// key, a batch per write transaction (engine.Reencrypt). Vectors are
// untouched: they never change with the key. Safe to run again after an
// interruption. Redis keeps no old copies of a rewritten value in its
// dataset, but an append-only file keeps the old envelopes until it is
// rewritten (BGREWRITEAOF), and RDB snapshots taken before keep them too.
func (s *Store) Reencrypt(ctx context.Context, opt reencrypt.Options) (reencrypt.Stats, error) {
	return engine.Reencrypt(ctx, s.Engine, opt)
}
