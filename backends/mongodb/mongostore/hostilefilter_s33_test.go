package mongostore_test

import (
	"context"
	"slices"
	"sort"
	"testing"

	"github.com/memvault/memvault/backends/mongodb/mongostore"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/memstore"
)

// TestHostileFilterAgreesWithMemory: filter keys and operands a BSON
// string cannot carry exactly — NUL, invalid UTF-8 — find on MongoDB
// what the memory store finds, as pgstore's test of the same name checks
// for PostgreSQL.
func TestHostileFilterAgreesWithMemory(t *testing.T) {
	ctx := context.Background()
	mg := newStore(t, mongotest.Database(t), mongostore.Options{})
	mem, err := memstore.New(memstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	ns := store.Namespace{"hostile"}
	items := map[string]map[string]any{
		"nul":     {"s": "a\x00b", "k\x00": "v", "o": map[string]any{"x\x00": 1.0}},
		"fffd":    {"s": "a\ufffd", "k": "v", "k\ufffd": "v"},
		"plain":   {"s": "ab", "k": "v"},
		"noField": {"t": "x"},
	}
	for _, s := range []store.Store{mg, mem} {
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
		{"k\xff": map[string]any{"$eq": "v"}},
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
		{"k": "v", "s": "a\xff"},
		{"k": "v", "s": "a\ufffd"},
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
		got, gerr := found(mg, f)
		if (werr == nil) != (gerr == nil) || !slices.Equal(got, want) {
			t.Errorf("filter %q: MongoDB found %v (err %v), memory %v (err %v)", f, got, gerr, want, werr)
		}
	}
}
