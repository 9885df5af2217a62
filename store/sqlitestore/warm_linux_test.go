package sqlitestore

import (
	"context"
	"fmt"
	"testing"

	"github.com/memvault/memvault/store"
)

// evictOrSkip drops path's pages from the page cache (evictFile), and
// skips the test when the file system keeps them (tmpfs).
func evictOrSkip(t *testing.T, path string) {
	t.Helper()
	if err := evictFile(path); err != nil {
		t.Fatal(err)
	}
	if share, ok := residentShare(path); !ok || share >= warmBelow {
		t.Skipf("the file system keeps %s in memory (%.0f %% resident)", path, 100*share)
	}
}

// TestColdIndexWarmsReadsAhead: the first searches after a store opens
// on a snapshot, before the middle parts are in (the index is cold:
// large refine batches), and on a file not in the page cache, read the
// fine parts of their later keys ahead on other connections
// (vecindex.FineWarmer), and still equal the exact scan; once the fill
// is in, searches warm nothing (they read few pages, and warming would
// only add work); nor do a cold index's searches on a file in the page
// cache (the reads they would overlap do not wait).
func TestColdIndexWarmsReadsAhead(t *testing.T) {
	idx, path, exact := fillStore(t, 3)
	check := func(s *Store, when string) {
		t.Helper()
		for j, p := range []store.Namespace{nil, {"u", "0"}, {"u", "1"}} {
			opt := store.SearchOptions{Query: fmt.Sprint("q", j+1), Limit: 10}
			if got, want := results(t, s, p, opt), results(t, exact, p, opt); got != want {
				t.Fatalf("%s, %v: the index returned\n%s\nthe exact scan\n%s", when, p, got, want)
			}
		}
	}

	// The file cached: no warming.
	if err := warmFile(path); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, path, Options{Index: idx})
	check(s, "file cached")
	if st := &s.cache.Stats; st.Snapshots.Load() != 1 || st.Warmed.Load() != 0 || st.Refined.Load() == 0 {
		t.Fatalf("first searches after open, file cached: %d snapshot loads, %d keys warmed, %d refined; want 1, 0, > 0", st.Snapshots.Load(), st.Warmed.Load(), st.Refined.Load())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	evictOrSkip(t, path)
	s = openStore(t, path, Options{Index: idx})
	defer s.Close()
	check(s, "file cold")
	st := &s.cache.Stats
	if st.Snapshots.Load() != 1 || st.Warmed.Load() == 0 {
		t.Fatalf("first searches after open, file cold: %d snapshot loads, %d keys warmed; want 1, > 0", st.Snapshots.Load(), st.Warmed.Load())
	}
	s.cache.WaitFill()
	if st.MidFills.Load() != 1 {
		t.Fatalf("%d fills, want 1", st.MidFills.Load())
	}
	warmed := st.Warmed.Load()
	evictOrSkip(t, path)
	check(s, "after the fill")
	if st.Warmed.Load() != warmed {
		t.Fatalf("searches with the middle parts in warmed %d keys", st.Warmed.Load()-warmed)
	}
}

// TestWarmReleasesConnections: WarmFines reads on the reader pool (the
// pages it reads enter the page cache) and closes what it reads (a leaked
// row set would hold a connection of the four), returns at once on an
// ended context, and does nothing in a store whose reads and writes share
// one connection (which the transaction holds: a read on the pool would
// wait for it forever).
func TestWarmReleasesConnections(t *testing.T) {
	idx, path, _ := fillStore(t, 0)
	ctx := context.Background()
	s := openStore(t, path, Options{Index: idx})
	defer s.Close()
	keys := make([]store.RowKey, 0, 300)
	for i := range 300 {
		keys = append(keys, store.RowKey{NS: store.Namespace{"u", fmt.Sprint(i % 2)}.String(), Key: fmt.Sprint(i)})
	}
	evictOrSkip(t, path)
	dtx, err := s.d.Begin(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	rt := dtx.(*tx)
	defer rt.Rollback()
	before, _ := residentShare(path)
	rt.WarmFines(ctx, keys)
	if after, _ := residentShare(path); after <= before {
		t.Fatalf("warming read nothing: %.3f of the file cached before, %.3f after", before, after)
	}
	if inUse := s.db.Reader().Stats().InUse; inUse != 1 {
		t.Fatalf("after warming, %d reader connections in use, want 1 (the transaction's)", inUse)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	rt.WarmFines(done, keys)
	if inUse := s.db.Reader().Stats().InUse; inUse != 1 {
		t.Fatalf("after warming on an ended context, %d reader connections in use, want 1", inUse)
	}

	mem := openStore(t, ":memory:", Options{Index: idx})
	defer mem.Close()
	mtx, err := mem.d.Begin(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	defer mtx.Rollback()
	// Would wait forever for the connection mtx holds.
	mtx.(*tx).WarmFines(ctx, keys)
}
