package memory

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/internal/engine"
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
// Every method is the store engine's (store/internal/engine), on this
// package's store.Driver: a map of rows under a read-write lock.
type Store struct {
	*engine.Engine
}

// Store implements every store interface (items.Complete lists them).
var _ items.Complete = (*Store)(nil)

// New returns an empty Store. It fails with ErrInvalidArgument for an
// index without embedder, with dimensions the embedder does not produce,
// with unparsable fields or an unknown distance.
func New(opt Options) (*Store, error) {
	e, err := engine.New(&driver{items: make(map[store.RowKey]*entry)}, engine.Options{Index: opt.Index, TTL: opt.TTL, Now: opt.Now})
	if err != nil {
		return nil, err
	}
	return &Store{e}, nil
}

// driver is the memory store.Driver: a map of entries. A View holds the
// read lock, an Update the write lock; refreshes of expiries are atomic, so
// a View may make them (DriverCaps.RefreshInView).
type driver struct {
	mu    sync.RWMutex
	items map[store.RowKey]*entry
}

// entry is one stored row. Everything but expires is immutable once the
// entry is in the map: a write replaces the entry.
type entry struct {
	row     store.Row    // Expires unused (see expires)
	expires atomic.Int64 // Unix nanoseconds; 0 = never
	vectors []store.Vector
}

// tx is a View or Update of the driver, which holds its lock.
type tx struct{ d *driver }

func (d *driver) Name() string { return "memory" }

func (d *driver) Caps() store.DriverCaps {
	return store.DriverCaps{RefreshInView: true, SharedValues: true}
}

func (d *driver) View(_ context.Context, fn func(store.DriverTx) error) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return fn(tx{d})
}

func (d *driver) Update(_ context.Context, fn func(store.DriverTx) error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return fn(tx{d})
}

func (d *driver) Close() error { return nil }

// row returns e's row with its current expiry.
func (e *entry) rowAt() store.Row {
	r := e.row
	if exp := e.expires.Load(); exp != 0 {
		r.Expires = time.Unix(0, exp)
	}
	return r
}

// live reports whether e is served at now (Unix nanoseconds).
func (e *entry) live(now int64) bool {
	exp := e.expires.Load()
	return exp == 0 || now < exp
}

func (t tx) Rows(_ context.Context, keys []store.RowKey, fn func(store.Row)) error {
	for _, k := range keys {
		if e, ok := t.d.items[k]; ok {
			fn(e.rowAt())
		}
	}
	return nil
}

func (t tx) Scan(_ context.Context, prefix store.Namespace, now time.Time, withoutVectors bool, fn func(store.Row) bool) error {
	n := now.UnixNano()
	// Rounds of a bounded selection: a page of a search needs few rows,
	// and each round takes the best k of the rows after the last one
	// handed out (the order is total), in O(n log k) without copying n.
	var last *entry
	for k := 64; ; k *= 4 {
		top := items.NewTopK(k, compareEntries)
		for _, e := range t.d.items {
			if e.row.Namespace.HasPrefix(prefix) && e.live(n) && (!withoutVectors || len(e.vectors) == 0) &&
				(last == nil || compareEntries(e, last) > 0) {
				top.Push(e)
			}
		}
		page := top.Sorted()
		for _, e := range page {
			if !fn(e.rowAt()) {
				return nil
			}
		}
		if len(page) < k {
			return nil
		}
		last = page[len(page)-1]
	}
}

// compareEntries orders entries as a search without query: most recently
// updated first, then by namespace and key.
func compareEntries(a, b *entry) int {
	if c := b.row.Updated.Compare(a.row.Updated); c != 0 {
		return c
	}
	if c := strings.Compare(a.row.NS, b.row.NS); c != 0 {
		return c
	}
	return strings.Compare(a.row.Key, b.row.Key)
}

func (t tx) Vectors(_ context.Context, prefix store.Namespace, now time.Time, fn func(store.RowKey, time.Time, store.Vector) error) error {
	n := now.UnixNano()
	for k, e := range t.d.items {
		if len(e.vectors) == 0 || !e.row.Namespace.HasPrefix(prefix) || !e.live(n) {
			continue
		}
		for _, v := range e.vectors {
			if err := fn(k, e.row.Updated, v); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t tx) Page(_ context.Context, ns, after string, limit int, now time.Time) ([]store.Row, error) {
	n := now.UnixNano()
	var rows []store.Row
	for k, e := range t.d.items {
		if k.NS == ns && k.Key > after && e.live(n) {
			rows = append(rows, e.rowAt())
		}
	}
	slices.SortFunc(rows, func(a, b store.Row) int { return strings.Compare(a.Key, b.Key) })
	return rows[:min(len(rows), limit)], nil
}

func (t tx) Namespaces(_ context.Context, prefix store.Namespace, now time.Time) ([]store.Namespace, error) {
	n := now.UnixNano()
	seen := map[string]bool{}
	var all []store.Namespace
	for k, e := range t.d.items {
		if !seen[k.NS] && e.live(n) && e.row.Namespace.HasPrefix(prefix) {
			seen[k.NS] = true
			all = append(all, e.row.Namespace)
		}
	}
	return all, nil
}

func (t tx) Write(_ context.Context, rows []store.RowWrite) error {
	for _, w := range rows {
		e := &entry{row: w.Row, vectors: w.Vectors}
		e.row.Expires = time.Time{}
		if !w.Expires.IsZero() {
			e.expires.Store(w.Expires.UnixNano())
		}
		if old, ok := t.d.items[w.RowKey]; ok && !w.Reindex {
			e.vectors = old.vectors
		}
		t.d.items[w.RowKey] = e
	}
	return nil
}

func (t tx) Delete(_ context.Context, keys []store.RowKey) error {
	for _, k := range keys {
		delete(t.d.items, k)
	}
	return nil
}

func (t tx) Refresh(_ context.Context, k store.RowKey, expires time.Time) error {
	if e, ok := t.d.items[k]; ok {
		e.expires.Store(expires.UnixNano())
	}
	return nil
}

func (t tx) DeletePrefix(_ context.Context, prefix store.Namespace) (int, error) {
	n := 0
	for k, e := range t.d.items {
		if e.row.Namespace.HasPrefix(prefix) {
			delete(t.d.items, k)
			n++
		}
	}
	return n, nil
}

func (t tx) DeleteExpired(_ context.Context, now time.Time) (int, error) {
	n, cut := 0, now.UnixNano()
	for k, e := range t.d.items {
		if exp := e.expires.Load(); exp != 0 && exp < cut {
			delete(t.d.items, k)
			n++
		}
	}
	return n, nil
}
