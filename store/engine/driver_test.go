package engine_test

// This file is a store.Driver written only against exported names, as a
// driver in another module (MongoDB, Redis) must be: if the seam named an
// internal type, it would not compile here. It runs the conformance
// suites, and checks the engine's guards of store.DriverCaps.StatementReads.

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/engine"
	"github.com/memvault/memvault/store/storetest"
)

// storage is what several processes share (a database): the committed
// rows, under one lock. A stored entry is immutable: writes replace it.
type storage struct {
	mu   sync.Mutex
	rows map[store.RowKey]*entry
	// fences counts the fences the engine handed a transaction
	// (engine.FenceTx).
	fences atomic.Int64
}

type entry struct {
	row     store.Row
	vectors []store.Vector
}

func newStorage() *storage { return &storage{rows: map[store.RowKey]*entry{}} }

// lockDriver is PostgreSQL's transaction model in memory: a read is a
// statement of its own, seeing what was committed before it; a write
// transaction queues its writes and applies them at Commit, under the
// storage's lock, after running there its fence (engine.FenceTx) and its
// conditional put's condition (engine.CondTx); a put keeps the replaced
// row's Created and moves Updated past it (UpsertVersions). So it declares
// StatementReads.
type lockDriver struct{ s *storage }

func (d lockDriver) Name() string { return "lock" }

func (d lockDriver) Caps() store.DriverCaps {
	return store.DriverCaps{StatementReads: true, UpsertVersions: true}
}

func (d lockDriver) Begin(ctx context.Context, write bool) (store.DriverTx, error) {
	return &lockTx{s: d.s, ctx: ctx}, nil
}

func (d lockDriver) Close() error { return nil }

// lockTx is a transaction of lockDriver.
type lockTx struct {
	s   *storage
	ctx context.Context // the operation's, for the fence at Commit
	// A write transaction's queued work, applied at Commit in order.
	ops     []op
	refresh map[store.RowKey]time.Time
	fences  []store.WriteFence
	cond    *store.PutCondition // for the next Put
}

// op is a queued put (w set) or delete.
type op struct {
	k    store.RowKey
	w    *store.RowWrite
	cond *store.PutCondition
}

var (
	_ engine.FenceTx = (*lockTx)(nil)
	_ engine.CondTx  = (*lockTx)(nil)
)

// Fence implements engine.FenceTx: the fence runs at Commit, under the
// storage's lock, so that an erasure cannot come between it and the writes.
func (t *lockTx) Fence(_ context.Context, f store.WriteFence) error {
	t.s.fences.Add(1)
	t.fences = append(t.fences, f)
	return nil
}

// PutCondition implements engine.CondTx: the next Put's condition is
// checked at Commit, under the lock.
func (t *lockTx) PutCondition(cond store.PutCondition) { t.cond = &cond }

func (t *lockTx) Rollback() error { t.ops, t.refresh, t.fences = nil, nil, nil; return nil }

func (t *lockTx) Commit() error {
	if len(t.ops) == 0 && len(t.refresh) == 0 {
		return nil
	}
	s := t.s
	s.mu.Lock()
	defer s.mu.Unlock()
	// A storage that cannot run SQL checks the keys under its lock.
	for _, f := range t.fences {
		if err := f.Check(t.ctx); err != nil {
			return err
		}
	}
	for _, o := range t.ops {
		if o.cond == nil {
			continue
		}
		old, ok := s.rows[o.k]
		live := ok && (old.row.Expires.IsZero() || old.row.Expires.After(o.w.Updated))
		var updated time.Time
		if ok {
			updated = old.row.Updated
		}
		if !o.cond.Holds(live, updated) {
			return store.ErrConflict // nothing written
		}
	}
	for k, exp := range t.refresh {
		if old, ok := s.rows[k]; ok {
			e := *old
			e.row.Expires = exp
			s.rows[k] = &e
		}
	}
	for _, o := range t.ops {
		if o.w == nil {
			delete(s.rows, o.k)
			continue
		}
		e := &entry{row: o.w.Row, vectors: o.w.Vectors}
		e.row.Value = slices.Clone(o.w.Value)
		if old, ok := s.rows[o.k]; ok {
			e.row.Created = old.row.Created
			if !e.row.Updated.After(old.row.Updated) {
				e.row.Updated = old.row.Updated.Add(time.Nanosecond)
			}
			if !o.w.Reindex {
				e.vectors = old.vectors
			}
		}
		s.rows[o.k] = e
	}
	t.ops, t.refresh, t.fences = nil, nil, nil
	return nil
}

func (t *lockTx) Put(_ context.Context, w store.RowWrite) error {
	w.Vectors = slices.Clone(w.Vectors)
	t.ops = append(t.ops, op{k: w.RowKey, w: &w, cond: t.cond})
	t.cond = nil
	return nil
}

func (t *lockTx) Delete(_ context.Context, k store.RowKey) error {
	t.ops = append(t.ops, op{k: k})
	return nil
}

func (t *lockTx) Refresh(_ context.Context, k store.RowKey, expires time.Time) error {
	if t.refresh == nil {
		t.refresh = map[store.RowKey]time.Time{}
	}
	t.refresh[k] = expires
	return nil
}

// live returns the committed entries that pass keep, read as one
// statement.
func (t *lockTx) live(keep func(*entry) bool) []*entry {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	var out []*entry
	for _, e := range t.s.rows {
		if keep(e) {
			out = append(out, e)
		}
	}
	return out
}

func liveAt(e *entry, now time.Time) bool {
	return e.row.Expires.IsZero() || e.row.Expires.After(now)
}

func namespace(e *entry) store.Namespace {
	if e.row.Namespace != nil {
		return e.row.Namespace
	}
	return store.Namespace(strings.Split(e.row.NS, "."))
}

func (t *lockTx) Get(_ context.Context, k store.RowKey) (store.Row, bool, error) {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	if e, ok := t.s.rows[k]; ok {
		return e.row, true, nil
	}
	return store.Row{}, false, nil
}

func (t *lockTx) Rows(_ context.Context, keys []store.RowKey, dst []store.Row) ([]store.Row, error) {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	for _, k := range keys {
		if e, ok := t.s.rows[k]; ok {
			dst = append(dst, e.row)
		}
	}
	return dst, nil
}

func (t *lockTx) Scan(_ context.Context, prefix store.Namespace, now time.Time, withoutVectors bool, after *store.ScanAfter, limit int) ([]store.Row, error) {
	order := func(a *entry, b store.ScanAfter) int {
		return cmp.Or(b.Updated.Compare(a.row.Updated), strings.Compare(a.row.NS, b.NS), strings.Compare(a.row.Key, b.Key))
	}
	es := t.live(func(e *entry) bool {
		return liveAt(e, now) && namespace(e).HasPrefix(prefix) && (!withoutVectors || len(e.vectors) == 0) &&
			(after == nil || order(e, *after) > 0)
	})
	slices.SortFunc(es, func(a, b *entry) int {
		return order(a, store.ScanAfter{RowKey: b.row.RowKey, Updated: b.row.Updated})
	})
	rows := make([]store.Row, 0, min(limit, len(es)))
	for _, e := range es[:min(limit, len(es))] {
		rows = append(rows, e.row)
	}
	return rows, nil
}

func (t *lockTx) Vectors(_ context.Context, prefix store.Namespace, now time.Time, fn func(store.RowKey, time.Time, []store.Vector) error) error {
	for _, e := range t.live(func(e *entry) bool {
		return len(e.vectors) > 0 && liveAt(e, now) && namespace(e).HasPrefix(prefix)
	}) {
		if err := fn(e.row.RowKey, e.row.Updated, e.vectors); err != nil {
			return err
		}
	}
	return nil
}

func (t *lockTx) Page(_ context.Context, ns, after string, limit int, now time.Time) ([]store.Row, error) {
	es := t.live(func(e *entry) bool { return e.row.NS == ns && e.row.Key > after && liveAt(e, now) })
	slices.SortFunc(es, func(a, b *entry) int { return strings.Compare(a.row.Key, b.row.Key) })
	rows := make([]store.Row, 0, min(limit, len(es)))
	for _, e := range es[:min(limit, len(es))] {
		rows = append(rows, e.row)
	}
	return rows, nil
}

func (t *lockTx) Namespaces(_ context.Context, prefix store.Namespace, now time.Time) ([]store.Namespace, error) {
	seen := map[string]bool{}
	var out []store.Namespace
	for _, e := range t.live(func(e *entry) bool { return liveAt(e, now) && namespace(e).HasPrefix(prefix) }) {
		if !seen[e.row.NS] {
			seen[e.row.NS] = true
			out = append(out, namespace(e))
		}
	}
	return out, nil
}

// DeletePrefix and DeleteExpired are statements of their own, as
// PostgreSQL's are: the engine runs each alone in its transaction.
func (t *lockTx) DeletePrefix(_ context.Context, prefix store.Namespace) (int, error) {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	n := 0
	for k, e := range t.s.rows {
		if namespace(e).HasPrefix(prefix) {
			delete(t.s.rows, k)
			n++
		}
	}
	return n, nil
}

func (t *lockTx) DeleteExpired(_ context.Context, now time.Time) ([]store.RowKey, error) {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	var gone []store.RowKey
	for k, e := range t.s.rows {
		if !e.row.Expires.IsZero() && e.row.Expires.Before(now) {
			delete(t.s.rows, k)
			gone = append(gone, k)
		}
	}
	return gone, nil
}

// TestExternalDriverConformance: a driver written outside the engine's
// module, through its exported names only, passes the conformance suite
// on the engine, with its conditional puts in its own commit (CondTx).
func TestExternalDriverConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, cfg storetest.Config) store.Store {
		e, err := engine.New(lockDriver{newStorage()}, engine.Options{Index: cfg.Index, TTL: cfg.TTL, Now: cfg.Now})
		if err != nil {
			t.Fatal(err)
		}
		return e
	})
}

// TestExternalDriverErasure: the same driver fences its writes itself
// (FenceTx, with the public store.WriteFence), and an erased subject's
// puts fail from every process sharing its storage.
func TestExternalDriverErasure(t *testing.T) {
	s := newStorage()
	storetest.RunErasure(t, nil, func(t *testing.T, ser serde.Serializer) store.Store {
		e, err := engine.New(lockDriver{s}, engine.Options{Serde: ser})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	})
	if s.fences.Load() == 0 {
		t.Fatal("the engine handed the driver no fence: it checked the writes itself")
	}
}

// capsDriver is lockDriver with other capabilities declared, or with
// transactions that lack an optional interface.
type capsDriver struct {
	lockDriver
	caps store.DriverCaps
	wrap func(*lockTx) store.DriverTx
}

func (d capsDriver) Caps() store.DriverCaps { return d.caps }

func (d capsDriver) Begin(ctx context.Context, write bool) (store.DriverTx, error) {
	tx, _ := d.lockDriver.Begin(ctx, write)
	return d.wrap(tx.(*lockTx)), nil
}

// TestStatementReadsGuards: the engine makes no write depend on a read of
// a driver that declares StatementReads (a read there sees another
// snapshot than the write): it refuses to run without UpsertVersions, a
// conditional put without CondTx and a fenced write without FenceTx, with
// engine.ErrDriverCaps, writing nothing.
func TestStatementReadsGuards(t *testing.T) {
	ctx := context.Background()
	ns := store.Namespace{"users", "carol"}
	v := map[string]any{"text": "prefers tea"}
	noCond := func(tx *lockTx) store.DriverTx {
		return struct {
			store.DriverTx
			engine.FenceTx
		}{tx, tx}
	}
	noFence := func(tx *lockTx) store.DriverTx {
		return struct {
			store.DriverTx
			engine.CondTx
		}{tx, tx}
	}
	reads := store.DriverCaps{StatementReads: true, UpsertVersions: true}

	t.Run("New without UpsertVersions", func(t *testing.T) {
		d := capsDriver{lockDriver{newStorage()}, store.DriverCaps{StatementReads: true}, noFence}
		e, err := engine.New(d, engine.Options{})
		if !errors.Is(err, engine.ErrDriverCaps) {
			if e != nil {
				e.Close()
			}
			t.Fatalf("New = %v, want engine.ErrDriverCaps", err)
		}
	})

	t.Run("PutIf without CondTx", func(t *testing.T) {
		s := newStorage()
		e, err := engine.New(capsDriver{lockDriver{s}, reads, noCond}, engine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		if err := e.PutIf(ctx, ns, "k", v, store.PutCondition{}); !errors.Is(err, engine.ErrDriverCaps) {
			t.Fatalf("PutIf = %v, want engine.ErrDriverCaps", err)
		}
		if len(s.rows) != 0 {
			t.Fatalf("the refused put stored %d rows", len(s.rows))
		}
	})

	t.Run("fence without FenceTx", func(t *testing.T) {
		s := newStorage()
		e, err := engine.New(capsDriver{lockDriver{s}, reads, noFence}, engine.Options{Serde: testkeys.Encrypting(t)})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		if err := e.Put(ctx, ns, "k", v); !errors.Is(err, engine.ErrDriverCaps) {
			t.Fatalf("Put = %v, want engine.ErrDriverCaps", err)
		}
		if len(s.rows) != 0 {
			t.Fatalf("the refused put stored %d rows", len(s.rows))
		}
	})

	t.Run("both present", func(t *testing.T) {
		s := newStorage()
		e, err := engine.New(lockDriver{s}, engine.Options{Serde: testkeys.Encrypting(t)})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		if err := e.PutIf(ctx, ns, "k", v, store.PutCondition{}); err != nil {
			t.Fatalf("PutIf = %v", err)
		}
		if it, err := e.Get(ctx, ns, "k"); err != nil || it == nil || it.Value["text"] != v["text"] {
			t.Fatalf("Get = %v, %v", it, err)
		}
	})
}

// countingTx counts a transaction's row reads.
type countingTx struct {
	*lockTx
	gets, rows *atomic.Int64
}

func (t countingTx) Get(ctx context.Context, k store.RowKey) (store.Row, bool, error) {
	t.gets.Add(1)
	return t.lockTx.Get(ctx, k)
}

func (t countingTx) Rows(ctx context.Context, keys []store.RowKey, dst []store.Row) ([]store.Row, error) {
	t.rows.Add(1)
	return t.lockTx.Rows(ctx, keys, dst)
}

// TestBatchReadsReplacedRowsOnce: on a driver whose Put does not keep the
// replaced row's versions (no UpsertVersions: MongoDB, Redis, memory), a
// batch reads the rows it replaces in one request, not one Get per put (a
// 200-item batch was 200 round trips), and a replaced item still keeps its
// CreatedAt (a key put twice in the batch included).
func TestBatchReadsReplacedRowsOnce(t *testing.T) {
	ctx := context.Background()
	var gets, rows atomic.Int64
	d := capsDriver{lockDriver{newStorage()}, store.DriverCaps{}, func(tx *lockTx) store.DriverTx {
		return countingTx{tx, &gets, &rows}
	}}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	e, err := engine.New(d, engine.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ns := store.Namespace{"users", "carol"}
	batch := func(n int) []store.Op {
		var ops []store.Op
		for i := range n {
			ops = append(ops, store.PutOp{Namespace: ns, Key: "k" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Value: map[string]any{"i": i}})
		}
		return ops
	}
	if _, err := e.Batch(ctx, batch(50)); err != nil {
		t.Fatal(err)
	}
	first := now
	now = now.Add(time.Hour)
	gets.Store(0)
	rows.Store(0)
	ops := append(batch(50), store.PutOp{Namespace: ns, Key: "kaa", Value: map[string]any{"i": "again"}})
	if _, err := e.Batch(ctx, ops); err != nil {
		t.Fatal(err)
	}
	if g, r := gets.Load(), rows.Load(); g != 0 || r != 1 {
		t.Errorf("a 51-put batch read %d rows one by one and made %d batch reads, want 0 and 1", g, r)
	}
	it, err := e.Get(ctx, ns, "kaa")
	if err != nil || it == nil {
		t.Fatalf("Get = %v, %v", it, err)
	}
	if !it.CreatedAt.Equal(first) || it.UpdatedAt.Before(now) || it.Value["i"] != "again" {
		t.Errorf("replaced twice in one batch: created %v (want %v), updated %v (want from %v), value %v", it.CreatedAt, first, it.UpdatedAt, now, it.Value)
	}
}
