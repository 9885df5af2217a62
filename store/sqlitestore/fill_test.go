package sqlitestore

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/vecindex"
)

// fillStore is a store of items in two dense topics whose snapshot has
// middle parts, with late items written since the snapshot (in its log),
// and the exact scan of its file.
func fillStore(t *testing.T, late int) (idx *store.IndexConfig, path string, exact *Store) {
	t.Helper()
	codeIndexOnly(t)
	n := vecindex.SnapshotMinCodes
	vecindex.SnapshotMinCodes = 100
	t.Cleanup(func() { vecindex.SnapshotMinCodes = n })
	ctx := context.Background()
	g := newTopics(600, 128, 2)
	idx = g.index()
	path = filepath.Join(t.TempDir(), "fill.db")
	s := openStore(t, path, Options{Index: idx})
	defer s.Close()
	var ops []store.Op
	for i := range 600 {
		ops = append(ops, store.PutOp{Namespace: store.Namespace{"u", fmt.Sprint(i % 2)}, Key: fmt.Sprint(i), Value: map[string]any{"text": fmt.Sprint("v", i)}})
	}
	if _, err := s.Batch(ctx, ops); err != nil {
		t.Fatal(err)
	}
	results(t, s, nil, store.SearchOptions{Query: "q0", Limit: 5}) // reads every code, stores the snapshot
	for i := range late {
		if err := s.Put(ctx, store.Namespace{"u", "0"}, fmt.Sprint("late", i), map[string]any{"text": fmt.Sprint("v", 700+i)}); err != nil {
			t.Fatal(err)
		}
	}
	var parts int
	if err := s.db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM store_vector_snapshot WHERE substr(data, 1, 5) = CAST('mvcm5' AS BLOB)`).Scan(&parts); err != nil || parts == 0 {
		t.Fatalf("no snapshot with middle parts stored: %d parts, %v", parts, err)
	}
	exact = openStore(t, path, Options{Index: idx, VectorCacheBytes: -1})
	t.Cleanup(func() { exact.Close() })
	return idx, path, exact
}

// TestSnapshotFillsMiddlePartsBehind: a store opened on a snapshot with
// middle parts answers its first search from the sign bits (and the fine
// parts), exactly, and reads the middle parts behind it; writes meanwhile
// (new items, a rewrite, a delete) keep theirs, and once the fill is in
// every live code has one and searches still equal the exact scan, with
// fewer fine parts read. Before, the load read every middle part before
// the first search could rank (two thirds of its ~300 ms of CPU at
// 100 000 × 1 536); MidParts and WaitFill did not exist.
func TestSnapshotFillsMiddlePartsBehind(t *testing.T) {
	idx, path, exact := fillStore(t, 3)
	ctx := context.Background()
	s := openStore(t, path, Options{Index: idx})
	defer s.Close()
	check := func(when string) {
		t.Helper()
		for j, p := range []store.Namespace{nil, {"u", "0"}, {"u", "1"}} {
			opt := store.SearchOptions{Query: fmt.Sprint("q", j+1), Limit: 10}
			if got, want := results(t, s, p, opt), results(t, exact, p, opt); got != want {
				t.Fatalf("%s, %v: the index returned\n%s\nthe exact scan\n%s", when, p, got, want)
			}
		}
	}
	check("first search")
	st := &s.cache.Stats
	if st.Snapshots.Load() != 1 || st.FullLoads.Load() != 0 {
		t.Fatalf("%d snapshot loads, %d full loads; want 1, 0", st.Snapshots.Load(), st.FullLoads.Load())
	}
	// Writes while the fill may be under way: they append codes, with
	// middle parts of their own, or leave dead ones.
	for i := range 4 {
		if err := s.Put(ctx, store.Namespace{"u", "1"}, fmt.Sprint("during", i), map[string]any{"text": fmt.Sprint("v", 800+i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Put(ctx, store.Namespace{"u", "1"}, "1", map[string]any{"text": "v801"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, store.Namespace{"u", "0"}, "2"); err != nil {
		t.Fatal(err)
	}
	s.cache.WaitFill()
	if st.MidFills.Load() != 1 || st.MidFailed.Load() != 0 {
		t.Fatalf("%d fills in, %d failed; want 1, 0", st.MidFills.Load(), st.MidFailed.Load())
	}
	if held, codes := s.cache.MidParts(); held != codes || codes != 600+3+4-1 {
		t.Fatalf("%d of %d codes have middle parts; want all of %d", held, codes, 600+3+4-1)
	}
	check("after the fill")
	if st.FullLoads.Load() != 0 {
		t.Fatalf("%d full loads", st.FullLoads.Load())
	}
}

// TestMalformedMiddlePartsFoundBehind: a snapshot whose last part of
// middle parts lost its last byte loads its sign bits and answers the
// first search exactly; the fill finds the damage and drops the index, the
// next search reads every code row (and answers exactly), and stores a
// sound snapshot, which a store opened later loads and fills.
func TestMalformedMiddlePartsFoundBehind(t *testing.T) {
	idx, path, exact := fillStore(t, 3)
	ctx := context.Background()
	w := openStore(t, path, Options{Index: idx})
	if _, err := w.db.Writer().ExecContext(ctx, `UPDATE store_vector_snapshot SET data = substr(data, 1, length(data) - 1)
		WHERE part = (SELECT max(part) FROM store_vector_snapshot)`); err != nil {
		t.Fatal(err)
	}
	w.Close()
	opt := store.SearchOptions{Query: "q4", Limit: 8}
	s := openStore(t, path, Options{Index: idx})
	defer s.Close()
	st := &s.cache.Stats
	for round := range 2 {
		if got, want := results(t, s, nil, opt), results(t, exact, nil, opt); got != want {
			t.Fatalf("search %d: the index returned\n%s\nthe exact scan\n%s", round, got, want)
		}
		s.cache.WaitFill()
	}
	if st.Snapshots.Load() != 1 || st.MidFailed.Load() != 1 || st.FullLoads.Load() != 1 {
		t.Fatalf("%d snapshot loads, %d fills failed, %d full loads; want 1 of each", st.Snapshots.Load(), st.MidFailed.Load(), st.FullLoads.Load())
	}
	if held, codes := s.cache.MidParts(); held != codes || codes == 0 {
		t.Fatalf("after the full load %d of %d codes have middle parts", held, codes)
	}
	later := openStore(t, path, Options{Index: idx})
	defer later.Close()
	if got, want := results(t, later, nil, opt), results(t, exact, nil, opt); got != want {
		t.Fatalf("later store: the index returned\n%s\nthe exact scan\n%s", got, want)
	}
	later.cache.WaitFill()
	if lst := &later.cache.Stats; lst.Snapshots.Load() != 1 || lst.MidFills.Load() != 1 || lst.FullLoads.Load() != 0 {
		t.Fatalf("later store: %d snapshot loads, %d fills, %d full loads; want 1, 1, 0", lst.Snapshots.Load(), lst.MidFills.Load(), lst.FullLoads.Load())
	}
}

// TestCloseStopsFill: closing a store right after its first search, with
// the fill of its middle parts pending or under way, stops and waits for
// it (the race detector watches), and the file opens again with the
// snapshot intact.
func TestCloseStopsFill(t *testing.T) {
	idx, path, exact := fillStore(t, 3)
	opt := store.SearchOptions{Query: "q2", Limit: 6}
	for range 3 {
		s := openStore(t, path, Options{Index: idx})
		if got, want := results(t, s, nil, opt), results(t, exact, nil, opt); got != want {
			t.Fatalf("the index returned\n%s\nthe exact scan\n%s", got, want)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		// Nothing runs behind a closed store.
		s.cache.WaitFill()
		if st := &s.cache.Stats; st.MidFills.Load()+st.MidFailed.Load() > 1 || st.FullLoads.Load() != 0 {
			t.Fatalf("%d fills, %d failed, %d full loads", st.MidFills.Load(), st.MidFailed.Load(), st.FullLoads.Load())
		}
	}
}

// TestFillAfterSnapshotDropped: a delete by another process between a
// load from the snapshot and the fill of its middle parts drops the
// snapshot; the fill then derives them from the code rows' fine parts
// (each code from the row with its sign bits), instead of dropping the
// index and reading every code row again at the next search (before:
// '0 fills in, 1 failed', and that search made a full load).
func TestFillAfterSnapshotDropped(t *testing.T) {
	idx, path, exact := fillStore(t, 3)
	s := openStore(t, path, Options{Index: idx})
	defer s.Close()
	other := openStore(t, path, Options{Index: idx})
	defer other.Close()
	// The fill's read opens after the other store's delete committed.
	s.cache.SetReader(func(ctx context.Context) (vecindex.Source, func(), error) {
		if err := other.Delete(ctx, store.Namespace{"u", "1"}, "5"); err != nil {
			return nil, nil, err
		}
		tx, err := s.d.Begin(ctx, false)
		if err != nil {
			return nil, nil, err
		}
		return tx.(vecindex.Source), func() { _ = tx.Rollback() }, nil
	})
	opt := store.SearchOptions{Query: "q3", Limit: 10}
	if got, want := results(t, s, nil, opt), results(t, exact, nil, opt); got != want {
		t.Fatalf("first search: the index returned\n%s\nthe exact scan\n%s", got, want)
	}
	s.cache.WaitFill()
	st := &s.cache.Stats
	if st.MidFills.Load() != 1 || st.MidFailed.Load() != 0 {
		t.Fatalf("%d fills in, %d failed; want 1, 0", st.MidFills.Load(), st.MidFailed.Load())
	}
	if got, want := results(t, s, nil, opt), results(t, exact, nil, opt); got != want {
		t.Fatalf("after the fill: the index returned\n%s\nthe exact scan\n%s", got, want)
	}
	if held, codes := s.cache.MidParts(); held != codes || codes != 600+3-1 {
		t.Fatalf("%d of %d codes have middle parts; want all of %d", held, codes, 600+3-1)
	}
	if st.FullLoads.Load() != 0 || st.Snapshots.Load() != 1 {
		t.Fatalf("%d full loads, %d snapshot loads; want 0, 1", st.FullLoads.Load(), st.Snapshots.Load())
	}
}

// TestNoFillOverBudget: a store whose index fits its budget with sign bits
// alone, not with middle parts, reads none behind its snapshot load (as a
// load that reads them drops them) and searches exactly (before: the fill
// read them all and dropped them, '1 fills').
func TestNoFillOverBudget(t *testing.T) {
	idx, path, exact := fillStore(t, 0)
	s := openStore(t, path, Options{Index: idx, VectorCacheBytes: 70_000})
	defer s.Close()
	opt := store.SearchOptions{Query: "q5", Limit: 10}
	for range 2 {
		if got, want := results(t, s, nil, opt), results(t, exact, nil, opt); got != want {
			t.Fatalf("the index returned\n%s\nthe exact scan\n%s", got, want)
		}
		s.cache.WaitFill()
	}
	st := &s.cache.Stats
	if held, _ := s.cache.MidParts(); st.MidFills.Load() != 0 || held != 0 || st.Snapshots.Load() != 1 || !s.cache.Loaded() {
		t.Fatalf("%d fills, %d middle parts held, %d snapshot loads, loaded %v; want 0, 0, 1, true", st.MidFills.Load(), held, st.Snapshots.Load(), s.cache.Loaded())
	}
}

// TestFillStartsAfterSearch: the fill of the middle parts starts once the
// batch of the search that loaded the index from the snapshot has ended
// its read (the engine calls StartFill), so that it does not take that
// search's cores (before, it started when the search had ranked, while
// it still read its results' values: 'the fill opened its read while the
// first search's read was open').
func TestFillStartsAfterSearch(t *testing.T) {
	idx, path, _ := fillStore(t, 3)
	s := openStore(t, path, Options{Index: idx})
	defer s.Close()
	var early atomic.Bool
	s.cache.SetReader(func(ctx context.Context) (vecindex.Source, func(), error) {
		// The search's read holds a connection of the reading pool
		// until its batch ends.
		if s.db.Reader().Stats().InUse > 0 {
			early.Store(true)
		}
		tx, err := s.d.Begin(ctx, false)
		if err != nil {
			return nil, nil, err
		}
		return tx.(vecindex.Source), func() { _ = tx.Rollback() }, nil
	})
	results(t, s, nil, store.SearchOptions{Query: "q1", Limit: 10})
	s.cache.WaitFill()
	if early.Load() {
		t.Fatal("the fill opened its read while the first search's read was open")
	}
	if st := &s.cache.Stats; st.Snapshots.Load() != 1 || st.MidFills.Load() != 1 {
		t.Fatalf("%d snapshot loads, %d fills; want 1, 1", st.Snapshots.Load(), st.MidFills.Load())
	}
}

// snapshotParts reads the stored snapshot: its generation (-1: none), the
// store's generation and the parts.
func snapshotParts(t *testing.T, s *Store) (snapGen, gen int64, parts [][]byte) {
	t.Helper()
	ctx := context.Background()
	if err := s.db.Reader().QueryRowContext(ctx, `SELECT q.snapshot_gen, g.gen FROM store_vector_quant q, store_generation g`).Scan(&snapGen, &gen); err != nil {
		t.Fatal(err)
	}
	rs, err := s.db.Reader().QueryContext(ctx, `SELECT data FROM store_vector_snapshot ORDER BY part`)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	for rs.Next() {
		var p []byte
		if err := rs.Scan(&p); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return snapGen, gen, parts
}

// TestDeleteStoresSnapshotBehind: a delete drops the snapshot (it held the
// item's name and code); the store that deleted, which holds the index,
// stores a new one of its index behind the delete, at the store's
// generation and without the deleted item (neither its key nor its code's
// bytes in any part), so that a store opened later loads it and reads no
// code row, and searches equal the exact scan. The same holds for the
// TTL sweeper's deletes and for a delete while the fill of the middle
// parts is under way (the snapshot is stored after it). Before, the
// snapshot was gone until a load read every code: 'after the delete the
// snapshot is at generation -1 of 5, 0 parts' (each case). A delete by a
// process that holds no index ("other-process") leaves the snapshot to
// the next process whose index, refreshed past it, finds none stored
// (State.NoSnapshot).
func TestDeleteStoresSnapshotBehind(t *testing.T) {
	for _, mode := range []string{"delete", "during-fill", "sweeper", "other-process"} {
		t.Run(mode, func(t *testing.T) {
			idx, path, exact := fillStore(t, 3)
			ctx := context.Background()
			now := time.Now()
			opts := Options{Index: idx}
			if mode == "sweeper" {
				// No sweeper of its own: the test sweeps, with a clock
				// moved past the item's expiry.
				opts.TTL = &store.TTLConfig{SweepInterval: -1}
				opts.Now = func() time.Time { return now }
			}
			s := openStore(t, path, opts)
			defer s.Close()
			victim := store.RowKey{NS: "u.1", Key: "5"}
			if mode == "sweeper" {
				if err := s.Put(ctx, store.Namespace{"u", "1"}, "5", map[string]any{"text": "v5"}, store.WithTTL(time.Minute)); err != nil {
					t.Fatal(err)
				}
			}
			var code []byte
			if err := s.db.Reader().QueryRowContext(ctx, `SELECT code FROM store_vector_codes WHERE prefix = ? AND key = ?`, victim.NS, victim.Key).Scan(&code); err != nil {
				t.Fatal(err)
			}
			if mode == "during-fill" {
				// The delete commits once the fill has started, before it
				// opens its read.
				s.cache.SetReader(func(ctx context.Context) (vecindex.Source, func(), error) {
					if err := s.Delete(ctx, store.Namespace{"u", "1"}, "5"); err != nil {
						return nil, nil, err
					}
					tx, err := s.d.Begin(ctx, false)
					if err != nil {
						return nil, nil, err
					}
					return tx.(vecindex.Source), func() { _ = tx.Rollback() }, nil
				})
			}
			opt := store.SearchOptions{Query: "q5", Limit: 10}
			results(t, s, nil, opt) // loads the index
			s.cache.WaitFill()
			switch mode {
			case "sweeper":
				now = now.Add(2 * time.Minute)
				if n, err := s.Sweep(ctx); err != nil || n != 1 {
					t.Fatalf("swept %d items: %v", n, err)
				}
			case "delete":
				if err := s.Delete(ctx, store.Namespace{"u", "1"}, "5"); err != nil {
					t.Fatal(err)
				}
			case "other-process":
				// A process without index deletes; the search of this
				// one, which refreshes its index from the log past the
				// delete, finds no snapshot and stores one behind it.
				o := openStore(t, path, Options{Index: idx})
				if err := o.Delete(ctx, store.Namespace{"u", "1"}, "5"); err != nil {
					t.Fatal(err)
				}
				if err := o.Close(); err != nil {
					t.Fatal(err)
				}
				results(t, s, nil, opt)
			}
			if err := s.Close(); err != nil { // waits for the snapshot behind
				t.Fatal(err)
			}
			later := openStore(t, path, Options{Index: idx})
			defer later.Close()
			snapGen, gen, parts := snapshotParts(t, later)
			if snapGen != gen || len(parts) == 0 {
				t.Fatalf("after the delete the snapshot is at generation %d of %d, %d parts", snapGen, gen, len(parts))
			}
			keys, err := vecindex.SnapshotKeys(parts, 128, snapGen)
			if err != nil {
				t.Fatal(err)
			}
			if len(keys) != 602 || slices.Contains(keys, victim) {
				t.Fatalf("the snapshot holds %d items, the deleted one: %v", len(keys), slices.Contains(keys, victim))
			}
			bits := code[len(code)-16:] // the sign bits of 128 dimensions
			for i, p := range parts {
				if bytes.Contains(p, bits) {
					t.Fatalf("part %d holds the deleted item's code", i)
				}
			}
			if got, want := results(t, later, nil, opt), results(t, exact, nil, opt); got != want {
				t.Fatalf("the index returned\n%s\nthe exact scan\n%s", got, want)
			}
			st := &later.cache.Stats
			if st.FullLoads.Load() != 0 || st.Snapshots.Load() != 1 || st.CodeRows.Load() != 0 {
				t.Fatalf("the store opened after the delete made %d full loads (%d code rows), %d snapshot loads",
					st.FullLoads.Load(), st.CodeRows.Load(), st.Snapshots.Load())
			}
		})
	}
}
