package cache

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memvault/memvault/store/internal/items"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/memvault/memvault/store"
)

// Defaults of Options.
const (
	DefaultSize   = 10000
	DefaultMaxAge = 30 * time.Second
)

// Options configures a cache. The zero value is usable.
type Options struct {
	// Size is how many Get results (items and absences) are kept; 0 means
	// DefaultSize.
	Size int
	// MaxAge bounds how long a cached result is served without asking the
	// inner store, and so how stale a read can be after a write made by
	// another process; 0 means DefaultMaxAge.
	MaxAge time.Duration
	// Now is the clock for MaxAge and for the items' expiry; nil means
	// time.Now. Give it the inner store's clock.
	Now func() time.Time
}

// Stats counts how Get calls were served.
type Stats struct {
	// Hits were answered from the cache.
	Hits uint64
	// Misses went to the inner store: not cached, too old, or an item
	// with a TTL that had to be refreshed or had expired.
	Misses uint64
	// Entries is the number of cached results.
	Entries int
	// Subject counts the Gets of items the inner store seals under a data
	// subject's own keys (SubjectSealer), which the cache never keeps:
	// each went to the inner store and is counted in Misses too.
	Subject uint64
}

// SubjectSealer is implemented by stores that seal some items under a
// data subject's own keys, so that destroying the keys erases them (the
// store engine, and so every memvault store, with per-subject keys). New
// looks for it in the inner store and in the stores under its wrappers
// (each a store with an Unwrap() store.Store method, as audit.Store).
//
// The cache never keeps a result of such an item, the item or its
// absence: a cached copy would outlive the subject's erasure by up to
// MaxAge, in this process and in any other that had it cached, since only
// the database and the key table know of an erasure and asking them is the
// round trip a hit saves. Such Gets always reach the inner store, which
// opens the value with the subject's key or fails once it is destroyed.
type SubjectSealer interface {
	// ItemHasSubject reports whether the item at ns/key is sealed under a
	// data subject's keys.
	ItemHasSubject(ns store.Namespace, key string) bool
}

// ReadRecorder is implemented by stores that record every read in an
// audit trail before they answer (audit.Store). New looks for it as for
// SubjectSealer. A result served from the cache would be a read with no
// record, so over such a store the cache keeps nothing: every Get goes to
// the store and is recorded. To cache audited reads, put the cache under
// the audit decorator (audit.NewStore(cache.New(inner, …), …)), where
// each Get is recorded and then answered by the cache.
type ReadRecorder interface {
	// RecordsReads reports whether every read is recorded.
	RecordsReads() bool
}

// recordsReads reports whether st or a store under its wrappers records
// every read (ReadRecorder).
func recordsReads(st store.Store) bool {
	for st != nil {
		if r, ok := st.(ReadRecorder); ok && r.RecordsReads() {
			return true
		}
		u, ok := st.(interface{ Unwrap() store.Store })
		if !ok {
			return false
		}
		st = u.Unwrap()
	}
	return false
}

// subjectSealerOf returns the first of st and the stores under its
// wrappers that is a SubjectSealer, or nil.
func subjectSealerOf(st store.Store) SubjectSealer {
	for st != nil {
		if s, ok := st.(SubjectSealer); ok {
			return s
		}
		u, ok := st.(interface{ Unwrap() store.Store })
		if !ok {
			return nil
		}
		st = u.Unwrap()
	}
	return nil
}

// Cache is a store.Store that caches Get results of an inner store, as New
// returns it. It is safe for concurrent use. The value New returns also
// implements each of store.Lister, store.PrefixDeleter,
// store.ConditionalPutter and store.Sweeper that the inner store
// implements, passing the call through, and none that it does not: a type
// assertion on a cache answers as one on its inner store would.
type Cache interface {
	store.Store
	io.Closer
	// Stats returns the hit and miss counters.
	Stats() Stats
	// Purge drops every cached result.
	Purge()
}

//go:generate go run gencaps.go

// cached is the cache; wrap (caps_gen.go) adds the optional interfaces of
// its inner store.
type cached struct {
	inner  store.Store
	maxAge time.Duration
	now    func() time.Time
	lru    *lru.Cache[cacheKey, entry]
	// subjects tells the items of a data subject, which are never cached;
	// nil when the inner store seals none (see SubjectSealer).
	subjects SubjectSealer
	// passThrough is set over a store that records every read
	// (ReadRecorder): nothing is cached, every Get reaches it.
	passThrough bool

	// mu orders cache fills against invalidations: a fill started before a
	// write (gen changed since) is dropped.
	mu  sync.Mutex
	gen uint64

	hits, misses, subject atomic.Uint64
	closed                atomic.Bool
}

// A cache of a store with every optional interface has them all
// (items.Complete lists them).
var _ items.Complete = cached15{}

type cacheKey struct{ ns, key string }

type entry struct {
	item   *store.Item // nil: the inner store had no item
	stored time.Time
}

// New wraps inner. It fails with store.ErrInvalidArgument for a negative
// size or max age.
func New(inner store.Store, opt Options) (Cache, error) {
	if inner == nil {
		return nil, fmt.Errorf("cache: %w: nil inner store", store.ErrInvalidArgument)
	}
	if opt.Size < 0 || opt.MaxAge < 0 {
		return nil, fmt.Errorf("cache: %w: negative size or max age", store.ErrInvalidArgument)
	}
	if opt.Size == 0 {
		opt.Size = DefaultSize
	}
	if opt.MaxAge == 0 {
		opt.MaxAge = DefaultMaxAge
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	l, err := lru.New[cacheKey, entry](opt.Size)
	if err != nil {
		return nil, fmt.Errorf("cache: %w: %v", store.ErrInvalidArgument, err)
	}
	return wrap(&cached{inner: inner, maxAge: opt.MaxAge, now: opt.Now, lru: l, subjects: subjectSealerOf(inner), passThrough: recordsReads(inner)}), nil
}

// Stats returns the hit and miss counters.
func (s *cached) Stats() Stats {
	return Stats{Hits: s.hits.Load(), Misses: s.misses.Load(), Entries: s.lru.Len(), Subject: s.subject.Load()}
}

// Purge drops every cached result.
func (s *cached) Purge() {
	s.mu.Lock()
	s.gen++
	s.lru.Purge()
	s.mu.Unlock()
}

func (s *cached) check(ctx context.Context) error {
	if s.closed.Load() {
		return fmt.Errorf("cache: %w", store.ErrClosed)
	}
	return ctx.Err()
}

// Get serves a fresh cached result when it can and asks the inner store
// otherwise. A cached item with a TTL is served from the cache only by a
// Get that opts out of refreshing (WithRefreshTTL(false)) and only until it
// expires: refreshing needs the inner store, and an expired item is never
// served (the inner store does not serve it either).
// Items without TTL and absences are served for up to MaxAge. Over a
// store that records every read (ReadRecorder) nothing is cached. An item of
// a data subject (SubjectSealer) is never cached, so never served from
// the cache: only fills are checked, which keeps the check off the hit
// path.
func (s *cached) Get(ctx context.Context, ns store.Namespace, key string, opts ...store.GetOption) (*store.Item, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	if err := ns.Validate(); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	if err := store.ValidateKey(key); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	k := cacheKey{ns.String(), key}
	now := s.now()
	if e, ok := s.lru.Get(k); ok && s.servable(e, now, items.ResolveGet(opts)) {
		s.hits.Add(1)
		return items.CloneItem(e.item), nil
	}
	s.misses.Add(1)
	if s.passThrough {
		return s.inner.Get(ctx, ns, key, opts...)
	}
	if s.subjects != nil && s.subjects.ItemHasSubject(ns, key) {
		s.subject.Add(1)
		return s.inner.Get(ctx, ns, key, opts...)
	}
	s.mu.Lock()
	gen := s.gen
	s.mu.Unlock()
	it, err := s.inner.Get(ctx, ns, key, opts...)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.gen == gen {
		s.lru.Add(k, entry{item: items.CloneItem(it), stored: now})
	}
	s.mu.Unlock()
	return it, nil
}

func (s *cached) servable(e entry, now time.Time, o store.GetOptions) bool {
	if now.Sub(e.stored) >= s.maxAge || now.Before(e.stored) {
		return false
	}
	if e.item == nil || e.item.ExpiresAt.IsZero() {
		return true
	}
	noRefresh := o.RefreshTTL != nil && !*o.RefreshTTL
	return noRefresh && !items.Expired(e.item.ExpiresAt, now)
}

// invalidate forgets the results of keys after a write.
func (s *cached) invalidate(keys ...cacheKey) {
	s.mu.Lock()
	s.gen++
	for _, k := range keys {
		s.lru.Remove(k)
	}
	s.mu.Unlock()
}

// Put writes through to the inner store and forgets the cached result.
func (s *cached) Put(ctx context.Context, ns store.Namespace, key string, value map[string]any, opts ...store.PutOption) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	err := s.inner.Put(ctx, ns, key, value, opts...)
	s.invalidate(cacheKey{ns.String(), key})
	return err
}

// Delete deletes in the inner store and forgets the cached result.
func (s *cached) Delete(ctx context.Context, ns store.Namespace, key string) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	err := s.inner.Delete(ctx, ns, key)
	s.invalidate(cacheKey{ns.String(), key})
	return err
}

// Search passes through to the inner store.
func (s *cached) Search(ctx context.Context, prefix store.Namespace, opt store.SearchOptions) ([]store.SearchItem, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	return s.inner.Search(ctx, prefix, opt)
}

// ListNamespaces passes through to the inner store.
func (s *cached) ListNamespaces(ctx context.Context, opt store.ListNamespacesOptions) ([]store.Namespace, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	return s.inner.ListNamespaces(ctx, opt)
}

// Batch passes through to the inner store and forgets the cached results
// of the keys it writes.
func (s *cached) Batch(ctx context.Context, ops []store.Op) ([]store.Result, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	var keys []cacheKey
	for _, op := range ops {
		if p, ok := op.(store.PutOp); ok {
			keys = append(keys, cacheKey{p.Namespace.String(), p.Key})
		}
	}
	res, err := s.inner.Batch(ctx, ops)
	if len(keys) > 0 {
		s.invalidate(keys...)
	}
	return res, err
}

// cacSweeper is the cache's store.Sweeper, for an inner Sweeper.
type cacSweeper struct{ s *cached }

// Sweep runs the inner store's Sweep. Cached items need no sweeping:
// expired ones are never served from the cache.
func (c cacSweeper) Sweep(ctx context.Context) (int, error) {
	if err := c.s.check(ctx); err != nil {
		return 0, err
	}
	return c.s.inner.(store.Sweeper).Sweep(ctx)
}

// Close drops the cache and closes the inner store when it is an
// io.Closer. Later calls fail with store.ErrClosed.
func (s *cached) Close() error {
	s.closed.Store(true)
	s.Purge()
	if c, ok := s.inner.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// EmbedderName implements store.EmbedderNamer with the inner store's
// answer ("", false when it cannot tell). Unlike the optional interfaces
// of caps_gen.go it is always there: its ok already says whether the
// inner store knows, and a seventh generated capability would double the
// combinations for a method that cannot fail.
func (s *cached) EmbedderName() (string, bool) { return store.EmbedderNameOf(s.inner) }
