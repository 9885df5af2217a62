package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memvault/memvault/store/internal/filtering"
	"github.com/memvault/memvault/store/internal/indexing"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/internal/items"
)

// Options configures a Store. The zero value is a store without semantic
// search and without TTLs that reads the system clock.
type Options struct {
	// Index enables semantic search; nil disables it (queries are then
	// ignored and searches list items newest first).
	Index *store.IndexConfig
	// TTL enables expiry; nil means puts may not carry a TTL (ErrNoTTL).
	TTL *store.TTLConfig
	// Now is the clock for timestamps and expiry; nil means time.Now.
	Now func() time.Time
}

// Store is an in-memory store.Store, safe for concurrent use. Values are
// deep-copied on the way in and out, so callers never share memory with
// stored state. Close stops its TTL sweeper.
//
// Put, Delete, Search and ListNamespaces are the store core's, one-op
// batches of Batch (see store.Store for their contract), and so are
// ListItems (store.Lister) and DeletePrefix (store.PrefixDeleter), around
// this store's storage operations.
type Store struct {
	*front
	b     *items.Base        // options, clock, closed state, sweeper
	index *store.IndexConfig // b.Index: nil without index
	ttl   *store.TTLConfig   // b.TTL

	mu    sync.RWMutex
	items map[itemKey]*entry
}

// Store implements every store interface (items.Complete lists them).
var _ items.Complete = (*Store)(nil)

// front is the store core's side of the public methods (items.Front).
type front = items.Front

type itemKey struct{ ns, key string }

// entry is one stored item. Everything but expires is immutable once the
// entry is in the map: a put replaces the entry.
type entry struct {
	item       store.Item // Value is private; ExpiresAt unused (see expires)
	nsKey      string     // item.Namespace.String()
	ttlMinutes int
	expires    atomic.Int64 // Unix nanoseconds; 0 = never
	vectors    []fieldVector
}

type fieldVector struct {
	field string
	vec   []float32
	norm  float64 // indexing.VectorNorm(vec)
}

// New returns an empty Store. It fails with ErrInvalidArgument for an
// index without embedder, with dimensions the embedder does not produce,
// with unparsable fields or an unknown distance.
func New(opt Options) (*Store, error) {
	b, err := items.NewBase("memory", opt.Index, opt.TTL, opt.Now)
	if err != nil {
		return nil, err
	}
	s := &Store{b: b, index: b.Index, ttl: b.TTL, items: make(map[itemKey]*entry)}
	s.front = items.NewFront(b, items.Hooks{Batch: s.Batch, ListItems: s.listItems, DeletePrefix: s.deletePrefix})
	b.StartSweeper(s.Sweep)
	return s, nil
}

// Close stops the sweeper and makes every later call fail with
// store.ErrClosed. It is safe to call more than once.
func (s *Store) Close() error { return s.b.Close(nil) }

// Sweep deletes the items whose expiry is before the store's current time
// and returns how many it deleted.
func (s *Store) Sweep(ctx context.Context) (int, error) {
	if err := s.b.Check(ctx); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.b.Now().UnixNano()
	n := 0
	for k, e := range s.items {
		if exp := e.expires.Load(); exp != 0 && exp < now {
			delete(s.items, k)
			n++
		}
	}
	return n, nil
}

// visible reports whether e is served at now.
func (s *Store) visible(e *entry, now int64) bool {
	exp := e.expires.Load()
	return exp == 0 || now < exp
}

// read returns a copy of e's item, refreshing its TTL first when asked.
func (s *Store) read(e *entry, now time.Time, refresh bool) store.Item {
	if refresh && e.ttlMinutes > 0 {
		e.expires.Store(now.Add(items.RefreshTTL(e.ttlMinutes)).UnixNano())
	}
	it := *items.CloneItem(&e.item)
	if exp := e.expires.Load(); exp != 0 {
		it.ExpiresAt = time.Unix(0, exp).In(now.Location())
	}
	return it
}

// Get returns the item at (ns, key), or nil when there is none.
func (s *Store) Get(ctx context.Context, ns store.Namespace, key string, opts ...store.GetOption) (*store.Item, error) {
	if err := s.b.Check(ctx); err != nil {
		return nil, err
	}
	if err := validateItem(ns, key); err != nil {
		return nil, err
	}
	o := items.ResolveGet(opts)
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.get(ns.String(), key, s.b.Now(), s.b.Refresh(o.RefreshTTL)), nil
}

func (s *Store) get(ns, key string, now time.Time, refresh bool) *store.Item {
	e, ok := s.items[itemKey{ns, key}]
	if !ok || !s.visible(e, now.UnixNano()) {
		return nil
	}
	it := s.read(e, now, refresh)
	return &it
}

func validateItem(ns store.Namespace, key string) error {
	if err := ns.Validate(); err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	if err := store.ValidateKey(key); err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	return nil
}

// put is a validated, embedded write.
type put struct {
	*items.Put
	k       itemKey
	vectors []fieldVector // Vectors with their norms
}

// Batch runs ops: every read sees the state before the batch's writes, and
// of several writes to one key the last wins. Embeddings are computed
// before the store is locked.
func (s *Store) Batch(ctx context.Context, ops []store.Op) ([]store.Result, error) {
	plan, puts, err := items.StartBatch(ctx, s.b, ops, newPut)
	if err != nil {
		return nil, err
	}
	queries := plan.Queries
	if len(puts) > 0 {
		s.mu.Lock()
		defer s.mu.Unlock()
	} else {
		s.mu.RLock()
		defer s.mu.RUnlock()
	}
	if s.b.Closed() {
		return nil, fmt.Errorf("memory: %w", store.ErrClosed)
	}
	now := s.b.Now()
	results := make([]store.Result, len(ops))
	for i, op := range ops {
		switch o := op.(type) {
		case store.GetOp:
			results[i].Item = s.get(o.Namespace.String(), o.Key, now, s.b.Refresh(o.RefreshTTL))
		case store.SearchOp:
			results[i].Items = s.search(o.Prefix, o.Options, queries[o.Options.Query], now)
		case store.ListNamespacesOp:
			results[i].Namespaces = s.listNamespaces(o.Options, now)
		}
	}
	for _, p := range puts {
		s.apply(p, now)
	}
	return results, nil
}

// newPut is a prepared write with the memory store's extras: its map key
// and its vectors' norms (for cosine scores without recomputing them).
func newPut(_ context.Context, ip *items.Put) (*put, error) {
	p := &put{Put: ip, k: itemKey{ip.Prefix, ip.Key}}
	p.vectors = make([]fieldVector, len(ip.Vectors))
	for i, v := range ip.Vectors {
		p.vectors[i] = fieldVector{field: ip.Texts[i].Field, vec: v, norm: indexing.VectorNorm(v)}
	}
	return p, nil
}

// apply performs one write; the caller holds the write lock.
func (s *Store) apply(p *put, now time.Time) {
	if p.Value == nil {
		delete(s.items, p.k)
		return
	}
	e := &entry{
		item: store.Item{
			Namespace: p.Namespace,
			Key:       p.Key,
			Value:     p.Value,
			CreatedAt: now,
			UpdatedAt: now,
		},
		nsKey:      p.k.ns,
		ttlMinutes: items.TTLMinutes(p.TTL),
	}
	if p.TTL > 0 {
		e.expires.Store(now.Add(p.TTL).UnixNano())
	}
	if old, ok := s.items[p.k]; ok {
		e.item.CreatedAt = old.item.CreatedAt
		// A write always moves UpdatedAt forward, even within one clock
		// tick, so that it names a version (store.PutCondition).
		if !e.item.UpdatedAt.After(old.item.UpdatedAt) {
			e.item.UpdatedAt = old.item.UpdatedAt.Add(time.Nanosecond)
		}
	}
	if p.Reindex {
		e.vectors = p.vectors
	}
	s.items[p.k] = e
}

type candidate struct {
	e      *entry
	score  float64
	scored bool
}

// search runs one search under the read (or write) lock. Scored items come
// first, best first; then unscored ones as a search without query orders
// them. Offset and limit apply to the whole list; only the first
// offset+limit candidates are kept while scanning.
func (s *Store) search(prefix store.Namespace, opt store.SearchOptions, query []float32, now time.Time) []store.SearchItem {
	nowNano := now.UnixNano()
	// The filter was validated in prepare, so it compiles.
	filter, _ := filtering.CompileFilter(opt.Filter)
	var scorer *indexing.QueryScorer
	if query != nil {
		scorer = indexing.NewQueryScorer(s.index.Distance, query)
	}
	top := newTopK(opt.Offset+opt.EffectiveLimit(), compareCandidates)
	for _, e := range s.items {
		if !e.item.Namespace.HasPrefix(prefix) || !s.visible(e, nowNano) || !filter.Match(e.item.Value) {
			continue
		}
		c := candidate{e: e}
		if scorer != nil && len(e.vectors) > 0 {
			c.scored = true
			c.score = scorer.Score(e.vectors[0].vec, e.vectors[0].norm)
			for _, fv := range e.vectors[1:] {
				c.score = max(c.score, scorer.Score(fv.vec, fv.norm))
			}
		}
		top.push(c)
	}
	cands := top.sorted()
	if opt.Offset >= len(cands) {
		return []store.SearchItem{}
	}
	out := make([]store.SearchItem, 0, len(cands)-opt.Offset)
	refresh := s.b.Refresh(opt.RefreshTTL)
	for _, c := range cands[opt.Offset:] {
		si := store.SearchItem{Item: s.read(c.e, now, refresh)}
		if c.scored {
			score := c.score
			si.Score = &score
		}
		out = append(out, si)
	}
	return out
}

func compareCandidates(a, b candidate) int {
	if a.scored != b.scored {
		if a.scored {
			return -1
		}
		return 1
	}
	if a.scored {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
	}
	return compareEntries(a.e, b.e)
}

// compareEntries orders entries as a search without query: most recently
// updated first, then by namespace and key.
func compareEntries(a, b *entry) int {
	if c := b.item.UpdatedAt.Compare(a.item.UpdatedAt); c != 0 {
		return c
	}
	if c := cmp.Compare(a.nsKey, b.nsKey); c != 0 {
		return c
	}
	return cmp.Compare(a.item.Key, b.item.Key)
}

// topK keeps the k smallest values pushed (by compare) in a bounded
// max-heap whose root is the worst value kept.
type topK[T any] struct {
	k       int
	compare func(a, b T) int
	h       []T
}

func newTopK[T any](k int, compare func(a, b T) int) *topK[T] {
	return &topK[T]{k: k, compare: compare, h: make([]T, 0, min(k, 1024))}
}

func (t *topK[T]) push(x T) {
	if t.k <= 0 {
		return
	}
	if len(t.h) < t.k {
		t.h = append(t.h, x)
		for i := len(t.h) - 1; i > 0; {
			p := (i - 1) / 2
			if t.compare(t.h[i], t.h[p]) <= 0 {
				break
			}
			t.h[i], t.h[p] = t.h[p], t.h[i]
			i = p
		}
		return
	}
	if t.compare(x, t.h[0]) >= 0 {
		return
	}
	t.h[0] = x
	for i, n := 0, len(t.h); ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		j := l
		if r := l + 1; r < n && t.compare(t.h[r], t.h[l]) > 0 {
			j = r
		}
		if t.compare(t.h[j], t.h[i]) <= 0 {
			break
		}
		t.h[i], t.h[j] = t.h[j], t.h[i]
		i = j
	}
}

// sorted returns the kept values, smallest first.
func (t *topK[T]) sorted() []T {
	slices.SortFunc(t.h, t.compare)
	return t.h
}

func (s *Store) listNamespaces(opt store.ListNamespacesOptions, now time.Time) []store.Namespace {
	nowNano := now.UnixNano()
	seen := map[string]bool{}
	var all []store.Namespace
	for _, e := range s.items {
		if seen[e.nsKey] || !s.visible(e, nowNano) {
			continue
		}
		seen[e.nsKey] = true
		all = append(all, e.item.Namespace)
	}
	return items.ListNamespaces(all, opt)
}
