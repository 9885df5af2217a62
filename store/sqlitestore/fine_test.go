package sqlitestore

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/vecindex"
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
	// Every other item's rows as the previous build wrote them: format 2,
	// no fine part.
	if _, err := s.db.Writer().ExecContext(ctx, `DELETE FROM store_vector_fine WHERE CAST(key AS INTEGER) % 2 = 0`); err != nil {
		t.Fatal(err)
	}
	coarse := 14 + 8*((dims+63)/64)
	var n2 int
	if err := s.db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM store_vector_codes c WHERE length(code) = ? AND substr(code, 1, 1) = X'02'
		AND NOT EXISTS (SELECT 1 FROM store_vector_fine f WHERE (f.prefix, f.key, f.field_name) = (c.prefix, c.key, c.field_name))`, coarse).Scan(&n2); err != nil || n2 != items/2 {
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

// pageStats returns the overflow pages of the code rows (dbstat), the
// code rows and the longest, and the fine parts.
func pageStats(t *testing.T, s *Store) (overflow, codes, longest, fines int) {
	t.Helper()
	ctx := context.Background()
	if err := s.db.Reader().QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM dbstat WHERE name = 'store_vector_codes' AND pagetype = 'overflow'),
		(SELECT count(*) FROM store_vector_codes), (SELECT coalesce(max(length(code)), 0) FROM store_vector_codes)`).Scan(&overflow, &codes, &longest); err != nil {
		t.Fatal(err)
	}
	if overflow != 0 {
		t.Fatalf("%d overflow pages of %d code rows (the longest %d bytes), want none", overflow, codes, longest)
	}
	if err := s.db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM store_vector_fine`).Scan(&fines); err != nil {
		t.Fatal(err)
	}
	return overflow, codes, longest, fines
}

// searchDense runs queries through s and exact and fails unless the pages
// are equal, scores included, the searches went through the code index,
// bounded candidates by their fine parts and read at most 4k vectors each.
func searchDense(t *testing.T, s, exact *Store, queries, k int) {
	t.Helper()
	r0, f0 := s.cache.Stats.Rescored.Load(), s.cache.Stats.Refined.Load()
	for j := range queries {
		opt := store.SearchOptions{Query: fmt.Sprint("q", j), Limit: k}
		if got, want := results(t, s, store.Namespace{"u"}, opt), results(t, exact, store.Namespace{"u"}, opt); got != want {
			t.Fatalf("query %d: the index returned\n%s\nthe exact scan\n%s", j, got, want)
		}
	}
	if !s.cache.Loaded() || s.cache.Stats.Refined.Load() == f0 {
		t.Fatal("the searches did not bound candidates by fine parts through the code index")
	}
	if per := float64(s.cache.Stats.Rescored.Load()-r0) / float64(queries); per > float64(4*k) {
		t.Fatalf("%.0f items read and scored exactly per search, want at most %d", per, 4*k)
	}
}

// TestCodeRowsFitThePage: at 1 536 dimensions a code row with its fine
// part (1 750 bytes) overflowed SQLite's 4 KiB page, so that loading the
// codes and bounding a candidate finely each read an overflow page (by a
// system call of its own: SQLite reads overflow pages past its cache);
// the fine parts now lie in a table of their own, every code row in its
// leaf, and searches still return the exact pages reading few vectors.
func TestCodeRowsFitThePage(t *testing.T) {
	const items, dims = 300, 1536
	s, exact, _, _ := denseStore(t, items, dims)
	if _, codes, _, fines := pageStats(t, s); codes != items || fines != items {
		t.Fatalf("%d code rows, %d fine parts: want %d each", codes, fines, items)
	}
	searchDense(t, s, exact, 6, 10)
}

// TestFormat3RowsMigrate: a file whose code rows hold their fine parts
// (format 3, as the build before store_vector_fine wrote them) is
// migrated at Open: each row keeps its sign bits (format 2), its fine
// part moves to store_vector_fine, and searches bound by it as before.
func TestFormat3RowsMigrate(t *testing.T) {
	const items, dims = 300, 1536
	s, exact, g, path := denseStore(t, items, dims)
	ctx := context.Background()
	if _, err := s.db.Writer().ExecContext(ctx, `
		UPDATE store_vector_codes SET code = CAST(X'03' || substr(code, 2) || (SELECT fine FROM store_vector_fine f
			WHERE (f.prefix, f.key, f.field_name) = (store_vector_codes.prefix, store_vector_codes.key, store_vector_codes.field_name)) AS BLOB);
		DROP TRIGGER store_vector_fine_gone;
		DROP TABLE store_vector_fine;
		DELETE FROM memvault_migrations WHERE component = 'store' AND v >= 7`); err != nil {
		t.Fatal(err)
	}
	var whole int
	if err := s.db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM store_vector_codes WHERE length(code) = ? AND substr(code, 1, 1) = X'03'`,
		14+8*24+8+dims).Scan(&whole); err != nil || whole != items {
		t.Fatalf("%d rows of format 3, want %d: %v", whole, items, err)
	}
	opened := openStore(t, path, Options{Index: g.index()})
	defer opened.Close()
	if _, codes, longest, fines := pageStats(t, opened); codes != items || fines != items || longest != 14+8*24 {
		t.Fatalf("after the migration: %d code rows (the longest %d bytes), %d fine parts", codes, longest, fines)
	}
	searchDense(t, opened, exact, 6, 10)
}

// TestFinePartsGoWithTheirCodes: no fine part outlives its code row,
// whichever write removes it (a put that replaces the item's vectors, a
// delete, a namespace's deletion), so that nothing derived from a deleted
// vector stays in the file.
func TestFinePartsGoWithTheirCodes(t *testing.T) {
	const items, dims = 40, 64
	s, _, _, _ := denseStore(t, items, dims)
	ctx := context.Background()
	check := func(when string, want int) {
		t.Helper()
		var fines, orphans int
		if err := s.db.Reader().QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM store_vector_codes c
			WHERE (f.prefix, f.key, f.field_name) = (c.prefix, c.key, c.field_name))) FROM store_vector_fine f`).Scan(&fines, &orphans); err != nil {
			t.Fatal(err)
		}
		if fines != want || orphans != 0 {
			t.Fatalf("%s: %d fine parts, %d without code row; want %d, 0", when, fines, orphans, want)
		}
	}
	check("seeded", items)
	if err := s.Put(ctx, store.Namespace{"u", "0"}, "0", map[string]any{"text": "v7"}); err != nil {
		t.Fatal(err)
	}
	check("after a put replacing an item's vector", items)
	if err := s.Put(ctx, store.Namespace{"u", "0"}, "0", map[string]any{"other": 1}); err != nil {
		t.Fatal(err)
	}
	check("after a put leaving an item no vector", items-1)
	if err := s.Delete(ctx, store.Namespace{"u", "1"}, "1"); err != nil {
		t.Fatal(err)
	}
	check("after a delete", items-2)
	if _, err := s.Batch(ctx, []store.Op{store.PutOp{Namespace: store.Namespace{"u", "1"}, Key: "3"}}); err != nil {
		t.Fatal(err)
	}
	check("after a delete by batch", items-3)
	if _, err := s.DeletePrefix(ctx, store.Namespace{"u", "0"}); err != nil {
		t.Fatal(err)
	}
	check("after a namespace's deletion", (items-3)-(items/2-1))
}

// TestDenseTopicSearchRefinesFew: the codes' middle parts, in memory
// (vecindex mid.go), leave a search in a dense topic few fine parts to
// read from SQLite, where the sign bits left it most of the topic; a
// store whose budget holds the sign bits but not the middle parts drops
// them and reads them all, and both return the exact scan's pages. Built
// without middle parts, both read 704 fine parts a search here (46 and
// 603 with them).
func TestDenseTopicSearchRefinesFew(t *testing.T) {
	const items, dims, k, queries = 1200, 256, 10, 8
	_, exact, g, path := denseStore(t, items, dims)
	refined := func(budget int64) float64 {
		s := openStore(t, path, Options{Index: g.index(), VectorCacheBytes: budget})
		defer s.Close()
		for j := range queries {
			opt := store.SearchOptions{Query: fmt.Sprint("q", j), Limit: k}
			if got, want := results(t, s, store.Namespace{"u"}, opt), results(t, exact, store.Namespace{"u"}, opt); got != want {
				t.Fatalf("budget %d, query %d: the index returned\n%s\nthe exact scan\n%s", budget, j, got, want)
			}
		}
		if !s.cache.Loaded() {
			t.Fatalf("budget %d: the searches did not go through the code index", budget)
		}
		return float64(s.cache.Stats.Refined.Load()) / queries
	}
	// 1 200 items: about 110 KB of sign bits, keys and slots, 200 KB of
	// middle parts.
	mid, signs := refined(0), refined(200_000)
	t.Logf("fine parts read a search: %.0f with middle parts, %.0f without", mid, signs)
	if mid > signs/3 {
		t.Fatalf("%.0f fine parts read a search with middle parts, %.0f without: want at most a third", mid, signs)
	}
}

// TestFormat2CodesRecoded: a file with code rows of format 2 (no fine
// part, as builds before the fine parts wrote them) is recoded once at
// Open by migration 8: every code row then has its fine part, searches
// bound by it and equal the exact scan, and a later Open recodes nothing.
// Before, those rows kept sign bits alone until their items were
// rewritten ('600 fine parts for 1200 code rows after Open').
func TestFormat2CodesRecoded(t *testing.T) {
	const items, dims = 1200, 256
	s, exact, g, path := denseStore(t, items, dims)
	ctx := context.Background()
	if _, err := s.db.Writer().ExecContext(ctx, `DELETE FROM store_vector_fine WHERE CAST(key AS INTEGER) % 2 = 0;
		DELETE FROM memvault_migrations WHERE component = 'store' AND v >= 8`); err != nil {
		t.Fatal(err)
	}
	opened := openStore(t, path, Options{Index: g.index()})
	defer opened.Close()
	if _, codes, _, fines := pageStats(t, opened); codes != items || fines != items {
		t.Fatalf("%d fine parts for %d code rows after Open", fines, codes)
	}
	searchDense(t, opened, exact, 6, 10)
	var gen, codesGen int64
	read := func() {
		if err := opened.db.Reader().QueryRowContext(ctx, `SELECT (SELECT gen FROM store_generation WHERE id = 0), codes_gen FROM store_vector_quant WHERE id = 0`).Scan(&gen, &codesGen); err != nil {
			t.Fatal(err)
		}
	}
	read()
	before := gen
	again := openStore(t, path, Options{Index: g.index()})
	defer again.Close()
	read()
	if gen != before || codesGen != gen {
		t.Fatalf("a later Open changed the generation %d -> %d (codes %d)", before, gen, codesGen)
	}
}

// TestFinePartsAloneBoundItemsOfTwoFields: a search bounds its candidates
// by their fine parts read alone (tx.Fines), scored against the
// metadata of the item's codes in the index; an item of two indexed
// fields has two fine parts and two codes, whose pairs it takes the best
// of, and pages equal the exact scan's, scores included.
func TestFinePartsAloneBoundItemsOfTwoFields(t *testing.T) {
	codeIndexOnly(t)
	const items, dims, k = 800, 128, 10
	ctx := context.Background()
	g := newTopics(2*items, dims, 2)
	idx := &store.IndexConfig{Embedder: g, Dims: dims, Fields: []string{"a", "b"}}
	path := filepath.Join(t.TempDir(), "two.db")
	s := openStore(t, path, Options{Index: idx})
	defer s.Close()
	var ops []store.Op
	for i := range items {
		ops = append(ops, store.PutOp{Namespace: store.Namespace{"u"}, Key: fmt.Sprint(i),
			Value: map[string]any{"a": fmt.Sprint("v", i), "b": fmt.Sprint("v", items+i)}})
	}
	if _, err := s.Batch(ctx, ops); err != nil {
		t.Fatal(err)
	}
	exact := openStore(t, path, Options{Index: idx, VectorCacheBytes: -1})
	defer exact.Close()
	if _, ok := any(&tx{}).(vecindex.FineReader); !ok {
		t.Fatal("the store's transactions do not read fine parts alone")
	}
	f0 := s.cache.Stats.Refined.Load()
	for j := range 6 {
		opt := store.SearchOptions{Query: fmt.Sprint("q", j), Limit: k}
		if got, want := results(t, s, nil, opt), results(t, exact, nil, opt); got != want {
			t.Fatalf("query %d: the index returned\n%s\nthe exact scan\n%s", j, got, want)
		}
	}
	if !s.cache.Loaded() || s.cache.Stats.Refined.Load() == f0 {
		t.Fatal("the searches did not bound candidates by fine parts through the code index")
	}
}
