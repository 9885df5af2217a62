package sqlitestore

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/store"
)

// denseStore seeds a store of items × dims vectors in two dense topics
// (one user's memories: issue 32) through the code index, and returns it
// with a store on the same file that scans SQLite exactly.
func denseStore(t *testing.T, items, dims int) (s, exact *Store, g *clustered, path string) {
	t.Helper()
	codeIndexOnly(t)
	g = newTopics(items, dims, 2)
	path = filepath.Join(t.TempDir(), "dense.db")
	s = openStore(t, path, Options{Index: g.index()})
	t.Cleanup(func() { s.Close() })
	var ops []store.Op
	for i := range items {
		ops = append(ops, store.PutOp{Namespace: store.Namespace{"u", fmt.Sprint(i % 2)}, Key: fmt.Sprint(i),
			Value: map[string]any{"text": fmt.Sprint("v", i)}})
	}
	if _, err := s.Batch(context.Background(), ops); err != nil {
		t.Fatal(err)
	}
	exact = openStore(t, path, Options{Index: g.index(), VectorCacheBytes: -1})
	t.Cleanup(func() { exact.Close() })
	return s, exact, g, path
}

// TestDenseTopicSearchReadsFewVectors searches items in two dense topics
// through the code index: the pages must equal the exact scan's, scores
// included, and each search must read and score exactly only a few items.
// Bounded by sign bits alone, a search read nearly all of the query's
// topic (416 of 1 200 items here; at 100 000 × 1 536 in 80 topics,
// 131–152 ms a search); the fine parts of the candidates' code rows bound
// all but a few below the page.
func TestDenseTopicSearchReadsFewVectors(t *testing.T) {
	const items, dims, k, queries = 1200, 256, 10, 8
	s, exact, _, _ := denseStore(t, items, dims)
	r0 := s.cache.Stats.Rescored.Load()
	for j := range queries {
		for _, p := range []store.Namespace{{"u"}, {"u", "1"}} {
			opt := store.SearchOptions{Query: fmt.Sprint("q", j), Limit: k}
			if got, want := results(t, s, p, opt), results(t, exact, p, opt); got != want {
				t.Fatalf("query %d under %v: the index returned\n%s\nthe exact scan\n%s", j, p, got, want)
			}
		}
	}
	if !s.cache.Loaded() {
		t.Fatal("the searches did not go through the code index")
	}
	if per := float64(s.cache.Stats.Rescored.Load()-r0) / (2 * queries); per > 4*k {
		t.Fatalf("%.0f items read and scored exactly per search, want at most %d", per, 4*k)
	}
}

// TestFormat2CodesStillRank: code rows of format 2 (sign bits only,
// written before the fine part) are still read and bound their items by
// their sign bits, alone or beside rows of format 3: pages equal the
// exact scan's, in a store opened on them as in the one that wrote them.
func TestFormat2CodesStillRank(t *testing.T) {
	const items, dims, k = 1200, 256, 10
	s, exact, g, path := denseStore(t, items, dims)
	ctx := context.Background()
	// Every other item's rows as the previous build wrote them: format
	// byte 2, the fine part cut off.
	coarse := 14 + 8*((dims+63)/64)
	if _, err := s.db.Writer().ExecContext(ctx, `UPDATE store_vector_codes SET code = CAST(X'02' || substr(code, 2, ?) AS BLOB) WHERE CAST(key AS INTEGER) % 2 = 0`, coarse-1); err != nil {
		t.Fatal(err)
	}
	var n2 int
	if err := s.db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM store_vector_codes WHERE length(code) = ? AND substr(code, 1, 1) = X'02'`, coarse).Scan(&n2); err != nil || n2 != items/2 {
		t.Fatalf("%d rows of format 2, want %d: %v", n2, items/2, err)
	}
	opened := openStore(t, path, Options{Index: g.index()})
	defer opened.Close()
	for j := range 5 {
		for _, st := range []*Store{s, opened} {
			opt := store.SearchOptions{Query: fmt.Sprint("q", j), Limit: k}
			if got, want := results(t, st, store.Namespace{"u"}, opt), results(t, exact, store.Namespace{"u"}, opt); got != want {
				t.Fatalf("query %d: the index returned\n%s\nthe exact scan\n%s", j, got, want)
			}
		}
	}
	if !opened.cache.Loaded() {
		t.Fatal("the searches did not go through the code index")
	}
}
