package pgstore_test

import (
	"context"
	"slices"
	"sort"
	"testing"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/memstore"
	"github.com/memvault/memvault/store/pgstore"
)

// TestFilterFindsValueWithNUL: an item whose value holds U+0000 somewhere
// (which JSONB cannot hold, so the plaintext store keeps it in an
// envelope) is found by a filter on its other fields, as on every other
// backend; before, the filter's SQL pushdown, which reads JSONB, dropped
// it from every filtered search and listing, with and without a query.
func TestFilterFindsValueWithNUL(t *testing.T) {
	ctx := context.Background()
	for _, indexed := range []bool{false, true} {
		var opts pgstore.Options
		if indexed {
			opts.Index = &store.IndexConfig{Embedder: embeddings.NewUnkeyedHashing(16), Fields: []string{"text"}}
		}
		s, err := pgstore.New(pgtest.Pool(t), opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Setup(ctx); err != nil {
			t.Fatal(err)
		}
		ns := store.Namespace{"nul"}
		if err := s.Put(ctx, ns, "with-nul", map[string]any{"user": "ann", "text": "tea with\x00milk"}); err != nil {
			t.Fatal(err)
		}
		if err := s.Put(ctx, ns, "plain", map[string]any{"user": "ann", "text": "tea"}); err != nil {
			t.Fatal(err)
		}
		if err := s.Put(ctx, ns, "other", map[string]any{"user": "bob", "text": "tea"}); err != nil {
			t.Fatal(err)
		}
		// Another user's envelope row passes the SQL too: the engine's
		// check must still drop it.
		if err := s.Put(ctx, ns, "other-nul", map[string]any{"user": "bob", "text": "tea\x00"}); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"", "tea"} {
			if q != "" && !indexed {
				continue
			}
			for _, f := range []map[string]any{{"user": "ann"}, {"user": map[string]any{"$ne": "bob"}}, {"user": map[string]any{"$gte": "ann", "$lt": "b"}}} {
				got, err := s.Search(ctx, ns, store.SearchOptions{Query: q, Filter: f})
				if err != nil {
					t.Fatal(err)
				}
				keys := map[string]bool{}
				for _, it := range got {
					keys[it.Key] = true
				}
				if len(got) != 2 || !keys["with-nul"] || !keys["plain"] {
					t.Errorf("indexed %v, query %q, filter %v: found %v, want with-nul and plain", indexed, q, f, keys)
				}
			}
		}
		s.Close()
	}
}

// TestHostileFilterAgreesWithMemory: filter keys and operands PostgreSQL
// text cannot hold — NUL, invalid UTF-8 — find what the memory store
// finds. Before, such a search failed with an SQL error (22021, 22P05),
// and an operand with an invalid byte was compared as U+FFFD (json.Marshal
// replaces it), so it found an item the memory store does not.
func TestHostileFilterAgreesWithMemory(t *testing.T) {
	ctx := context.Background()
	pg, err := pgstore.New(pgtest.Pool(t), pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := pg.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	mem, err := memstore.New(memstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	ns := store.Namespace{"hostile"}
	items := map[string]map[string]any{
		"nul":     {"s": "a\x00b", "k\x00": "v", "o": map[string]any{"x\x00": 1.0}},
		"fffd":    {"s": "a\ufffd", "k": "v"},
		"plain":   {"s": "ab", "k": "v"},
		"noField": {"t": "x"},
	}
	for _, s := range []store.Store{pg, mem} {
		for k, v := range items {
			if err := s.Put(ctx, ns, k, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	filters := []map[string]any{
		{"k\x00": "v"},
		{"k\xff": "v"},
		{"k\x00": map[string]any{"$ne": "w"}},
		{"s": "a\x00b"},
		{"s": "a\xff"},
		{"s": map[string]any{"$eq": "a\xff"}},
		{"s": map[string]any{"$ne": "a\x00b"}},
		{"s": map[string]any{"$ne": "a\xff"}},
		{"s": map[string]any{"$gt": "a\x00"}},
		{"s": map[string]any{"$lt": "a\xff"}},
		{"s": map[string]any{"$gte": "a\x00b", "$lte": "ab"}},
		{"o": map[string]any{"x\x00": 1}},
		{"o": map[string]any{"$eq": map[string]any{"x\x00": 1}}},
		{"k": "v", "s": map[string]any{"$ne": "a\x00"}},
	}
	found := func(s store.Store, f map[string]any) ([]string, error) {
		got, err := s.Search(ctx, ns, store.SearchOptions{Filter: f, Limit: 10})
		var keys []string
		for _, it := range got {
			keys = append(keys, it.Key)
		}
		sort.Strings(keys)
		return keys, err
	}
	for _, f := range filters {
		want, werr := found(mem, f)
		got, gerr := found(pg, f)
		if (werr == nil) != (gerr == nil) || !slices.Equal(got, want) {
			t.Errorf("filter %q: PostgreSQL found %v (err %v), memory %v (err %v)", f, got, gerr, want, werr)
		}
	}
}
