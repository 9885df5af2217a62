package memstore

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/engine"
	"github.com/memvault/memvault/store/internal/items"
	"github.com/memvault/memvault/store/vecindex"
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
	// VectorIndexBytes, when positive, ranks searches with a query by the
	// in-process code index of store/sqlitestore (package vecindex: a sign code
	// per vector, about d/8 + 16 bytes, within this budget), which then
	// scores exactly only the best few items. It pays when vectors are
	// many and large and the embedder's vectors have structure, as real
	// embeddings do; its bounds cannot prune unstructured (random)
	// vectors, and a search then also scans exactly. 0 (the default)
	// scores every vector, which in memory is cheap.
	VectorIndexBytes int64
}

// Store is an in-memory store.Store, safe for concurrent use. Values are
// deep-copied on the way in and out, so callers never share memory with
// stored state. Close stops its TTL sweeper.
//
// Every method is the store engine's (store/engine), on this
// package's store.Driver: a map of rows under a read-write lock. The store
// has no serializer, so the driver keeps each value as the engine's
// private copy of it (store.DriverCaps.InProcessValues) rather than its
// JSON encoding: nothing leaves the process, and encoding would cost every
// read a decode. A store with a serializer would get sealed bytes from the
// engine, as SQLite does.
type Store struct {
	*engine.Engine
}

// Store implements every store interface (items.Complete lists them).
var _ items.Complete = (*Store)(nil)

// New returns an empty Store. It fails with ErrInvalidArgument for an
// index without embedder, with dimensions the embedder does not produce,
// with unparsable fields or an unknown distance.
func New(opt Options) (*Store, error) {
	e, err := engine.New(&driver{items: make(map[store.RowKey]*entry), codes: opt.VectorIndexBytes > 0},
		engine.Options{Index: opt.Index, TTL: opt.TTL, Now: opt.Now, VectorIndexBytes: opt.VectorIndexBytes})
	if err != nil {
		return nil, err
	}
	return &Store{e}, nil
}

// driver is the memory store.Driver: a map of entries. A read-only
// transaction holds the read lock, a write transaction the write lock;
// refreshes of expiries are atomic, so a read-only transaction may make
// them (DriverCaps.RefreshInView). Rows are immutable once stored (a write
// replaces the entry), so the rows it returns share the stored namespace
// and value, which the engine never modifies and copies before handing
// out.
type driver struct {
	mu    sync.RWMutex
	items map[store.RowKey]*entry
	// gen is the generation of the code index's data (engine.IndexTx),
	// bumped by every write that changes items; onCommit the index's
	// hooks of the write transaction in progress.
	gen      int64
	onCommit []func()
	codes    bool // keep codes for the index (Options.VectorIndexBytes)
}

// entry is one stored row. Everything but expires is immutable once the
// entry is in the map: a write replaces the entry.
type entry struct {
	row     store.Row    // Expires unused (see expires)
	expires atomic.Int64 // Unix nanoseconds; 0 = never
	vectors []store.Vector
}

// readTx and writeTx are the driver's transactions, holding its read or
// write lock until they end. Both are one pointer, so that returning one
// as a store.DriverTx allocates nothing.
type (
	readTx  struct{ *driver }
	writeTx struct{ *driver }
)

func (d *driver) Name() string { return "memory" }

func (d *driver) Caps() store.DriverCaps {
	return store.DriverCaps{RefreshInView: true, InProcessValues: true, CodeIndex: d.codes}
}

func (d *driver) Begin(_ context.Context, write bool) (store.DriverTx, error) {
	if write {
		d.mu.Lock()
		return writeTx{d}, nil
	}
	d.mu.RLock()
	return readTx{d}, nil
}

func (d *driver) Close() error { return nil }

// A memory transaction cannot fail to commit, and its writes are applied
// as they are made: a write transaction the engine rolls back has written
// nothing (the engine writes last, after every check).
func (t readTx) Commit() error    { t.mu.RUnlock(); return nil }
func (t readTx) Rollback() error  { t.mu.RUnlock(); return nil }
func (t writeTx) Rollback() error { t.onCommit = nil; t.mu.Unlock(); return nil }

// Commit runs the code index's hooks holding the lock: in commit order.
func (t writeTx) Commit() error {
	for _, fn := range t.onCommit {
		fn()
	}
	t.onCommit = nil
	t.mu.Unlock()
	return nil
}

// rowAt returns e's row with its current expiry.
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

func (d *driver) Get(_ context.Context, k store.RowKey) (store.Row, bool, error) {
	if e, ok := d.items[k]; ok {
		return e.rowAt(), true, nil
	}
	return store.Row{}, false, nil
}

func (d *driver) Rows(_ context.Context, keys []store.RowKey, dst []store.Row) ([]store.Row, error) {
	for _, k := range keys {
		if e, ok := d.items[k]; ok {
			dst = append(dst, e.rowAt())
		}
	}
	return dst, nil
}

func (d *driver) Scan(_ context.Context, prefix store.Namespace, now time.Time, withoutVectors bool, after *store.ScanAfter, limit int) ([]store.Row, error) {
	n := now.UnixNano()
	// A bounded selection of the limit first rows after the cursor (the
	// order is total), in O(n log limit) without copying n.
	top := items.NewTopK(limit, compareEntries)
	for _, e := range d.items {
		if e.row.Namespace.HasPrefix(prefix) && e.live(n) && (!withoutVectors || len(e.vectors) == 0) &&
			(after == nil || compareAfter(e, after) > 0) {
			top.Push(e)
		}
	}
	page := top.Sorted()
	rows := make([]store.Row, len(page))
	for i, e := range page {
		rows[i] = e.rowAt()
	}
	return rows, nil
}

// compareEntries orders entries as a search without query: most recently
// updated first, then by namespace and key.
func compareEntries(a, b *entry) int {
	return compareAfter(a, &store.ScanAfter{RowKey: b.row.RowKey, Updated: b.row.Updated})
}

// compareAfter compares an entry with a scan's position in that order.
func compareAfter(a *entry, b *store.ScanAfter) int {
	if c := b.Updated.Compare(a.row.Updated); c != 0 {
		return c
	}
	if c := strings.Compare(a.row.NS, b.NS); c != 0 {
		return c
	}
	return strings.Compare(a.row.Key, b.Key)
}

func (d *driver) Vectors(_ context.Context, prefix store.Namespace, now time.Time, fn func(store.RowKey, time.Time, []store.Vector) error) error {
	n := now.UnixNano()
	for k, e := range d.items {
		if len(e.vectors) == 0 || !e.row.Namespace.HasPrefix(prefix) || !e.live(n) {
			continue
		}
		if err := fn(k, e.row.Updated, e.vectors); err != nil {
			return err
		}
	}
	return nil
}

func (d *driver) Page(_ context.Context, ns, after string, limit int, now time.Time) ([]store.Row, error) {
	n := now.UnixNano()
	var rows []store.Row
	for k, e := range d.items {
		if k.NS == ns && k.Key > after && e.live(n) {
			rows = append(rows, e.rowAt())
		}
	}
	slices.SortFunc(rows, func(a, b store.Row) int { return strings.Compare(a.Key, b.Key) })
	return rows[:min(len(rows), limit)], nil
}

func (d *driver) Namespaces(_ context.Context, prefix store.Namespace, now time.Time) ([]store.Namespace, error) {
	n := now.UnixNano()
	seen := map[string]bool{}
	var all []store.Namespace
	for k, e := range d.items {
		if !seen[k.NS] && e.live(n) && e.row.Namespace.HasPrefix(prefix) {
			seen[k.NS] = true
			all = append(all, e.row.Namespace)
		}
	}
	return all, nil
}

func (t writeTx) Put(_ context.Context, w store.RowWrite) error {
	e := &entry{row: w.Row, vectors: w.Vectors}
	e.row.Expires = time.Time{}
	if !w.Expires.IsZero() {
		e.expires.Store(w.Expires.UnixNano())
	}
	if old, ok := t.items[w.RowKey]; ok && !w.Reindex {
		e.vectors = old.vectors
	}
	t.items[w.RowKey] = e
	return nil
}

func (t writeTx) Delete(_ context.Context, k store.RowKey) error {
	delete(t.items, k)
	return nil
}

func (d *driver) Refresh(_ context.Context, k store.RowKey, expires time.Time) error {
	if e, ok := d.items[k]; ok {
		e.expires.Store(expires.UnixNano())
	}
	return nil
}

func (t writeTx) DeletePrefix(_ context.Context, prefix store.Namespace) (int, error) {
	n := 0
	for k, e := range t.items {
		if e.row.Namespace.HasPrefix(prefix) {
			delete(t.items, k)
			n++
		}
	}
	return n, nil
}

func (t writeTx) DeleteExpired(_ context.Context, now time.Time) ([]store.RowKey, error) {
	var gone []store.RowKey
	cut := now.UnixNano()
	for k, e := range t.items {
		if exp := e.expires.Load(); exp != 0 && exp < cut {
			delete(t.items, k)
			gone = append(gone, k)
		}
	}
	return gone, nil
}

// A read-only transaction writes nothing: the engine never asks it to.
var errReadOnly = errors.New("memory: write in a read-only transaction")

func (readTx) Put(context.Context, store.RowWrite) error                  { return errReadOnly }
func (readTx) Delete(context.Context, store.RowKey) error                 { return errReadOnly }
func (readTx) DeletePrefix(context.Context, store.Namespace) (int, error) { return 0, errReadOnly }
func (readTx) DeleteExpired(context.Context, time.Time) ([]store.RowKey, error) {
	return nil, errReadOnly
}

// The code index's data (engine.IndexTx): the codes live in the entries'
// vectors, written with them. A store in one process keeps its index
// current through the commit hooks, so the driver keeps no change log:
// an index that is behind (after a deleted prefix, which may change any
// item) reloads every code, and no snapshot is kept.

func (d *driver) IndexState(context.Context) (vecindex.State, error) {
	return vecindex.State{Gen: d.gen, CodesGen: d.gen, LogFloor: d.gen}, nil
}

func (d *driver) Quant(context.Context) ([]float32, int64, error) { return nil, -1, nil }

func (d *driver) Changed(context.Context, int64, int) ([]vecindex.Key, bool, error) {
	return nil, true, nil
}

func (d *driver) Codes(_ context.Context, keys []vecindex.Key, fn func(vecindex.Key, int64, []byte)) error {
	for _, k := range keys {
		if e, ok := d.items[k]; ok {
			for _, v := range e.vectors {
				fn(k, e.row.Updated.UnixNano(), v.Code)
			}
		}
	}
	return nil
}

func (d *driver) AllCodes(_ context.Context, fn func(ns, key []byte, updated int64, code []byte) bool) error {
	// In key order, which the index loads without a lookup per item.
	coded := make([]*entry, 0, len(d.items))
	for _, e := range d.items {
		if len(e.vectors) > 0 {
			coded = append(coded, e)
		}
	}
	slices.SortFunc(coded, func(a, b *entry) int {
		if c := strings.Compare(a.row.NS, b.row.NS); c != 0 {
			return c
		}
		return strings.Compare(a.row.Key, b.row.Key)
	})
	for _, e := range coded {
		ns, key := []byte(e.row.NS), []byte(e.row.Key)
		for _, v := range e.vectors {
			if !fn(ns, key, e.row.Updated.UnixNano(), v.Code) {
				return nil
			}
		}
	}
	return nil
}

func (d *driver) SnapshotSize(context.Context) (int64, error)            { return 0, nil }
func (d *driver) SnapshotParts(context.Context, func([]byte) bool) error { return nil }

func (d *driver) VectorsOf(_ context.Context, keys []store.RowKey, fn func(store.RowKey, time.Time, []store.Vector) error) error {
	for _, k := range keys {
		if e, ok := d.items[k]; ok && len(e.vectors) > 0 {
			if err := fn(k, e.row.Updated, e.vectors); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t writeTx) Bump(context.Context, []store.RowKey, bool) (int64, error) {
	t.gen++
	return t.gen, nil
}

func (t writeTx) OnCommit(fn func()) { t.onCommit = append(t.onCommit, fn) }

func (readTx) Bump(context.Context, []store.RowKey, bool) (int64, error) { return 0, errReadOnly }
func (readTx) OnCommit(func())                                           {}

var (
	_ engine.IndexTx = readTx{}
	_ engine.IndexTx = writeTx{}
)
