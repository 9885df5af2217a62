package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/store/vecindex"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/storetest"
)

// The tests of this file damage the index snapshot (or the log it is
// completed with) as an operator or a careless tool would, through a
// connection of their own, and check that no search trusts an index that
// does not hold exactly the store's coded items: every search equals the
// exact scan of SQLite (VectorCacheBytes < 0), and an item is found by its
// own vector.

const (
	snapItems = 400
	snapDims  = 128
)

// snapFixture is a store file of snapItems items in four namespaces whose
// index snapshot s (the store that wrote it, index loaded) stored, and a
// store on the file that scans SQLite exactly.
type snapFixture struct {
	t     *testing.T
	path  string
	emb   *clustered
	idx   *store.IndexConfig
	s     *Store
	exact *Store
}

func newSnapFixture(t *testing.T) *snapFixture {
	t.Helper()
	codeIndexOnly(t)
	defer func(n int) { t.Cleanup(func() { vecindex.SnapshotMinCodes = n }) }(vecindex.SnapshotMinCodes)
	vecindex.SnapshotMinCodes = 100
	f := &snapFixture{t: t, path: filepath.Join(t.TempDir(), "snap.db"), emb: newClustered(snapItems, snapDims)}
	f.idx = &store.IndexConfig{Embedder: f.emb, Dims: snapDims, Fields: []string{"a"}}
	f.s = f.open()
	f.exact = f.openOpts(Options{Index: f.idx, VectorCacheBytes: -1})
	var ops []store.Op
	for i := range snapItems {
		ops = append(ops, store.PutOp{Namespace: snapNS(i), Key: fmt.Sprint(i), Value: map[string]any{"a": fmt.Sprint("v", i)}})
	}
	if _, err := f.s.Batch(context.Background(), ops); err != nil {
		t.Fatal(err)
	}
	f.same(f.s, "the writer") // loads every code, then stores the snapshot
	if n := f.snapshotParts(); n == 0 {
		t.Fatal("no snapshot stored")
	}
	return f
}

func snapNS(i int) store.Namespace { return store.Namespace{"n", fmt.Sprint(i % 4)} }

func (f *snapFixture) open() *Store { return f.openOpts(Options{Index: f.idx}) }

func (f *snapFixture) openOpts(o Options) *Store {
	s := openStore(f.t, f.path, o)
	f.t.Cleanup(func() { s.Close() })
	return s
}

// raw runs q on a connection of its own: another process's, or a tool's.
func (f *snapFixture) raw(q string, args ...any) {
	f.t.Helper()
	db, err := sql.Open("sqlite", f.path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		f.t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(context.Background(), q, args...); err != nil {
		f.t.Fatalf("%s: %v", q, err)
	}
}

func (f *snapFixture) snapshotParts() (n int) {
	f.t.Helper()
	if err := f.exact.db.Reader().QueryRowContext(context.Background(), `SELECT count(*) FROM store_vector_snapshot`).Scan(&n); err != nil {
		f.t.Fatal(err)
	}
	return n
}

// same checks that s's searches equal the exact scan's (so recall@10 is
// 1): several queries, prefixes and pages.
func (f *snapFixture) same(s *Store, label string) {
	f.t.Helper()
	for j, p := range []store.Namespace{nil, {"n"}, {"n", "2"}} {
		for _, opt := range []store.SearchOptions{
			{Query: fmt.Sprint("q", 10+j), Limit: 10},
			{Query: fmt.Sprint("q", 20+j), Limit: 7, Offset: 3},
		} {
			got, want := results(f.t, s, p, opt), results(f.t, f.exact, p, opt)
			if got != want {
				f.t.Fatalf("%s, %v %+v: the index returned\n%s\nthe exact scan\n%s", label, p, opt, got, want)
			}
		}
	}
}

// finds checks that a search with item vec's vector returns the item
// (ns, key) among the first three, with score 1.
func (f *snapFixture) finds(s *Store, ns store.Namespace, key string, vec int, label string) {
	f.t.Helper()
	got := results(f.t, s, nil, store.SearchOptions{Query: fmt.Sprint("v", vec), Limit: 3})
	if want := ns.String() + "/" + key + "=1 "; !strings.Contains(got, want) {
		f.t.Fatalf("%s: a search with the vector of %s/%s returned\n%s", label, ns, key, got)
	}
}

// forgeSnapshot rewrites the snapshot rows, through SQL, as the snapshot
// of the stored one without the items remove and with those of add (one
// code each): well formed, of the same generation.
func (f *snapFixture) forgeSnapshot(remove []store.RowKey, add map[store.RowKey][]byte) {
	f.t.Helper()
	ctx := context.Background()
	var gen int64
	if err := f.exact.db.Reader().QueryRowContext(ctx, `SELECT snapshot_gen FROM store_vector_quant`).Scan(&gen); err != nil {
		f.t.Fatal(err)
	}
	rs, err := f.exact.db.Reader().QueryContext(ctx, `SELECT data FROM store_vector_snapshot ORDER BY part`)
	if err != nil {
		f.t.Fatal(err)
	}
	var parts [][]byte
	for rs.Next() {
		var p []byte
		if err := rs.Scan(&p); err != nil {
			f.t.Fatal(err)
		}
		parts = append(parts, p)
	}
	rs.Close()
	parts, err = vecindex.RewriteSnapshot(parts, snapDims, gen, remove, add)
	if err != nil {
		f.t.Fatal(err)
	}
	f.raw(`DELETE FROM store_vector_snapshot`)
	for i, p := range parts {
		f.raw(`INSERT INTO store_vector_snapshot (part, data) VALUES (?, ?)`, i, p)
	}
}

// TestDeletedSnapshotIsRebuilt: with every snapshot row deleted by another
// connection, the store whose index was loaded notices on its next search
// and stores the snapshot again; deleted again, a store opened after
// searches exactly (it reads every code) and stores a new one; and every
// store searches exactly after a put.
func TestDeletedSnapshotIsRebuilt(t *testing.T) {
	ctx := context.Background()
	f := newSnapFixture(t)
	f.raw(`DELETE FROM store_vector_snapshot`)
	f.same(f.s, "the store that had loaded the index")
	if f.snapshotParts() == 0 {
		t.Fatal("the store that had loaded the index did not store the deleted snapshot again")
	}

	f.raw(`DELETE FROM store_vector_snapshot`)
	fresh := f.open()
	f.same(fresh, "a store opened after the deletion")
	f.finds(fresh, snapNS(17), "17", 17, "a store opened after the deletion")
	if fresh.cache.Stats.FullLoads.Load() != 1 || fresh.cache.Stats.Snapshots.Load() != 0 {
		t.Fatalf("the store opened after the deletion made %d full loads, %d snapshot loads; want 1, 0",
			fresh.cache.Stats.FullLoads.Load(), fresh.cache.Stats.Snapshots.Load())
	}

	// A put after the deletion (by another process): every store, open
	// before or after, searches exactly.
	w := f.open()
	if err := w.Put(ctx, store.Namespace{"n", "new"}, "x", map[string]any{"a": "v3"}); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*Store{"writer": f.s, "opened after the deletion": fresh, "opened after the put": f.open()} {
		f.same(s, name+", after a put")
		f.finds(s, snapNS(21), "21", 21, name+", after a put")
	}
	// The full load stored a new snapshot, which the next store loads.
	if f.snapshotParts() == 0 {
		t.Fatal("no snapshot stored again after the deletion")
	}
	next := f.open()
	f.same(next, "the next store")
	if next.cache.Stats.Snapshots.Load() != 1 || next.cache.Stats.FullLoads.Load() != 0 {
		t.Fatalf("the next store made %d snapshot loads, %d full loads; want 1, 0",
			next.cache.Stats.Snapshots.Load(), next.cache.Stats.FullLoads.Load())
	}
}

// TestDeletedSnapshotBehindLoadedIndex: a store whose index was loaded
// before another store wrote the snapshot falls further behind than the
// log keeps (logKeep generations), so its next search reloads from the
// snapshot and the log since; the snapshot's rows were deleted meanwhile.
func TestDeletedSnapshotBehindLoadedIndex(t *testing.T) {
	codeIndexOnly(t)
	defer func(n int) { vecindex.SnapshotMinCodes = n }(vecindex.SnapshotMinCodes)
	vecindex.SnapshotMinCodes = 100
	ctx := context.Background()
	f := &snapFixture{t: t, path: filepath.Join(t.TempDir(), "behind.db"), emb: newClustered(snapItems, snapDims)}
	f.idx = &store.IndexConfig{Embedder: f.emb, Dims: snapDims, Fields: []string{"a"}}
	f.exact = f.openOpts(Options{Index: f.idx, VectorCacheBytes: -1})
	early := f.open()
	batch := func(s *Store, from, to int) {
		var ops []store.Op
		for i := from; i < to; i++ {
			ops = append(ops, store.PutOp{Namespace: snapNS(i), Key: fmt.Sprint(i), Value: map[string]any{"a": fmt.Sprint("v", i)}})
		}
		if _, err := s.Batch(ctx, ops); err != nil {
			t.Fatal(err)
		}
	}
	batch(early, 0, 50)
	f.same(early, "the early store") // loads 50 codes: too few for a snapshot
	w := f.open()
	batch(w, 50, snapItems)
	f.same(w, "the writer") // stores the snapshot
	if f.snapshotParts() == 0 {
		t.Fatal("no snapshot stored")
	}
	f.raw(`DELETE FROM store_vector_snapshot`)
	for i := range logKeep + 8 {
		if err := w.Put(ctx, store.Namespace{"n", "new"}, "x", map[string]any{"a": fmt.Sprint("v", i%snapItems)}); err != nil {
			t.Fatal(err)
		}
	}
	f.same(early, "the early store, behind the log")
	f.finds(early, snapNS(33), "33", 33, "the early store, behind the log")
}

// TestSnapshotMissingAnItem: a well-formed snapshot that lacks an item
// the store holds (forged through SQL; or a snapshot written before the
// item whose log row a tool deleted) is not trusted: a search with the
// item's own vector finds it.
func TestSnapshotMissingAnItem(t *testing.T) {
	ctx := context.Background()
	t.Run("forged", func(t *testing.T) {
		f := newSnapFixture(t)
		f.forgeSnapshot([]store.RowKey{{NS: snapNS(42).String(), Key: "42"}}, nil)
		fresh := f.open()
		f.finds(fresh, snapNS(42), "42", 42, "the snapshot without item 42")
		f.same(fresh, "the snapshot without item 42")
	})
	t.Run("log deleted", func(t *testing.T) {
		f := newSnapFixture(t)
		w := f.open()
		if err := w.Put(ctx, store.Namespace{"n", "late"}, "x", map[string]any{"a": "v399"}); err != nil {
			t.Fatal(err)
		}
		f.raw(`DELETE FROM store_vector_log`)
		fresh := f.open()
		f.finds(fresh, store.Namespace{"n", "late"}, "x", 399, "the item logged after the snapshot, log deleted")
		f.same(fresh, "the item logged after the snapshot, log deleted")
	})
}

// TestSnapshotWithItemsNotStored: items of a snapshot that the store does
// not hold (forged through SQL) are not returned, and the snapshot is not
// loaded: the store reads every code.
func TestSnapshotWithItemsNotStored(t *testing.T) {
	f := newSnapFixture(t)
	f.forgeSnapshot(nil, map[store.RowKey][]byte{{NS: "n.0", Key: "ghost"}: vecindex.EncodeCode(f.emb.Item(7), nil)})
	fresh := f.open()
	got := results(t, fresh, nil, store.SearchOptions{Query: "v7", Limit: 5})
	if strings.Contains(got, "ghost") {
		t.Fatalf("a search returned an item the store does not hold:\n%s", got)
	}
	f.same(fresh, "a snapshot with an extra item")
	if fresh.cache.Stats.Snapshots.Load() != 0 || fresh.cache.Stats.FullLoads.Load() != 1 {
		t.Fatalf("the store made %d snapshot loads, %d full loads; want 0, 1",
			fresh.cache.Stats.Snapshots.Load(), fresh.cache.Stats.FullLoads.Load())
	}
}

// TestCoverageKeptByEveryWrite: the stored coverage of the code rows
// equals the one counted from the rows after every kind of write (puts of
// one and two vectors and of none, deletes, the recode that centres the
// codes, a sweep, DeletePrefix, Reembed), and the indexes of this store
// and of another one on the file, refreshed by their own writes and from
// the log, are never found not to cover the store (which would make every
// search read every code). A coverage that a build without it left wrong
// is repaired by the next load; one missing (a database from before it)
// is counted by Open.
func TestCoverageKeptByEveryWrite(t *testing.T) {
	codeIndexOnly(t)
	ctx := context.Background()
	const items, dims = 1100, 64
	g := newClustered(items, dims)
	idx := &store.IndexConfig{Embedder: g, Dims: dims, Fields: []string{"a", "b"}}
	clock := storetest.NewClock()
	ttl := &store.TTLConfig{SweepInterval: -1, DisableRefreshOnRead: true}
	path := filepath.Join(t.TempDir(), "cov.db")
	opts := Options{Index: idx, TTL: ttl, Now: clock.Now}
	s := openStore(t, path, opts)
	defer s.Close()
	other := openStore(t, path, opts)
	defer other.Close()
	exact := openStore(t, path, Options{Index: idx, TTL: ttl, Now: clock.Now, VectorCacheBytes: -1})
	defer exact.Close()

	check := func(label string) {
		t.Helper()
		var (
			stored storedCoverage
			real   coverage
		)
		err := s.db.Read(ctx, func(tx *sql.Tx) error {
			var n, sum sql.NullInt64
			if err := tx.QueryRowContext(ctx, `SELECT code_items, code_sum FROM store_vector_quant`).Scan(&n, &sum); err != nil {
				return err
			}
			stored = scanCoverage(n, sum)
			var err error
			real, err = codedItems(ctx, tx)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if !stored.Known || stored.Cov != real {
			t.Fatalf("%s: stored coverage %+v (known %v), counted %+v", label, stored.Cov, stored.Known, real)
		}
		for name, st := range map[string]*Store{"this store": s, "another store": other} {
			opt := store.SearchOptions{Query: "q5", Limit: 8}
			if got, want := results(t, st, nil, opt), results(t, exact, nil, opt); got != want {
				t.Fatalf("%s, %s: the index returned\n%s\nthe exact scan\n%s", label, name, got, want)
			}
			if n := st.cache.Stats.Uncovered.Load(); n != 0 {
				t.Fatalf("%s, %s: %d indexes did not cover the store", label, name, n)
			}
		}
	}
	value := func(i int) map[string]any {
		switch i % 5 {
		case 0:
			return map[string]any{"c": "no vector"}
		case 1:
			return map[string]any{"a": fmt.Sprint("v", i), "b": fmt.Sprint("v", (i*7)%items)}
		}
		return map[string]any{"a": fmt.Sprint("v", i)}
	}
	var ops []store.Op
	minute := time.Minute
	for i := range items {
		op := store.PutOp{Namespace: store.Namespace{"u", fmt.Sprint(i % 3)}, Key: fmt.Sprint(i), Value: value(i)}
		if i%11 == 0 {
			op.Options.TTL = &minute
		}
		ops = append(ops, op)
	}
	if _, err := s.Batch(ctx, ops[:500]); err != nil {
		t.Fatal(err)
	}
	check("500 items")
	if _, err := other.Batch(ctx, ops[500:]); err != nil { // centres the codes: every one recoded
		t.Fatal(err)
	}
	check("every item, codes centred")
	r := rand.New(rand.NewPCG(9, 9))
	for round := range 6 {
		w := []*Store{s, other}[round%2]
		var ops []store.Op
		for range 20 {
			i := r.IntN(items)
			ns := store.Namespace{"u", fmt.Sprint(i % 3)}
			if r.IntN(3) == 0 {
				ops = append(ops, store.PutOp{Namespace: ns, Key: fmt.Sprint(i)}) // delete
			} else {
				ops = append(ops, store.PutOp{Namespace: ns, Key: fmt.Sprint(i), Value: value(r.IntN(items))})
			}
		}
		if _, err := w.Batch(ctx, ops); err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprint("round ", round))
	}
	clock.Advance(2 * time.Minute)
	if n, err := other.Sweep(ctx); err != nil || n == 0 {
		t.Fatalf("sweep: %d, %v", n, err)
	}
	check("after a sweep")
	if _, err := s.DeletePrefix(ctx, store.Namespace{"u", "2"}); err != nil {
		t.Fatal(err)
	}
	check("after DeletePrefix")
	// The same vectors under another name: stores opened from now on use it.
	renamed := newClustered(items+1, dims)
	if _, err := s.Reembed(ctx, renamed, store.ReembedOptions{BatchSize: 100}); err != nil {
		t.Fatal(err)
	}
	check("after Reembed")
	opts.Index = &store.IndexConfig{Embedder: renamed, Dims: dims, Fields: []string{"a", "b"}}

	// A build that did not keep the coverage wrote a code row.
	if _, err := s.db.Writer().ExecContext(ctx, `UPDATE store_generation SET gen = gen + 1;
		INSERT INTO store_vector_codes (prefix, key, field_name, updated_at, code)
			SELECT prefix, 'copy', field_name, updated_at, code FROM store_vector_codes
			WHERE (prefix, key) = (SELECT prefix, key FROM store_vector_codes LIMIT 1);
		INSERT INTO store_vector_log (gen, prefix, key)
			SELECT gen, (SELECT prefix FROM store_vector_codes WHERE key = 'copy' LIMIT 1), 'copy' FROM store_generation;
		UPDATE store_vector_quant SET codes_gen = (SELECT gen FROM store_generation)`); err != nil {
		t.Fatal(err)
	}
	fresh := openStore(t, path, opts)
	defer fresh.Close()
	results(t, fresh, nil, store.SearchOptions{Query: "q5", Limit: 8}) // reads every code, then stores the coverage
	if fresh.cache.Stats.FullLoads.Load() != 1 {
		t.Fatalf("after a write that did not keep the coverage, %d full loads", fresh.cache.Stats.FullLoads.Load())
	}
	s.cache.Stats.Uncovered.Store(0) // this store's index was right to be dropped
	other.cache.Stats.Uncovered.Store(0)
	results(t, s, nil, store.SearchOptions{Query: "q5", Limit: 8})
	results(t, other, nil, store.SearchOptions{Query: "q5", Limit: 8})
	s.cache.Stats.Uncovered.Store(0)
	other.cache.Stats.Uncovered.Store(0)
	check("after the repair")

	// A database from before the coverage: Open counts it.
	if _, err := s.db.Writer().ExecContext(ctx, `UPDATE store_vector_quant SET code_items = NULL, code_sum = NULL`); err != nil {
		t.Fatal(err)
	}
	again := openStore(t, path, opts)
	defer again.Close()
	check("after Open counted it")
}
