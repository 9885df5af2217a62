package pgstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/pgstore"
)

// TestSelectiveSearches: searches whose filter or prefix keeps few of the
// index's first candidates (so the store widens them, with ef_search and
// iterative scans, or goes exact) still return full pages of the nearest
// items, as an exact (flat) store ranks them.
func TestSelectiveSearches(t *testing.T) {
	ctx := context.Background()
	idx := func(kind pgstore.ANNKind) pgstore.Options {
		return pgstore.Options{Index: &store.IndexConfig{Embedder: embeddings.NewUnkeyedHashing(32), Fields: []string{"text"}}, ANN: pgstore.ANNConfig{Kind: kind}}
	}
	hnsw, _ := open(t, idx(pgstore.HNSW))
	flat, _ := open(t, idx(pgstore.Flat))
	r := rand.New(rand.NewPCG(3, 4))
	var ops []store.Op
	for i := range 1500 {
		ops = append(ops, store.PutOp{
			Namespace: store.Namespace{"users", fmt.Sprintf("u%d", i%30)},
			Key:       fmt.Sprint(i),
			Value:     map[string]any{"text": benchText(r), "bucket": i % 12},
		})
	}
	_, err := hnsw.Batch(ctx, ops)
	must(t, err)
	_, err = flat.Batch(ctx, ops)
	must(t, err)

	for _, tc := range []struct {
		prefix store.Namespace
		filter map[string]any
	}{
		{store.Namespace{"users"}, map[string]any{"bucket": 5}},                              // 1 in 12
		{store.Namespace{"users"}, map[string]any{"bucket": map[string]any{"$gte": 9}}},      // 1 in 4
		{store.Namespace{"users", "u7"}, nil},                                                // 1 in 30
		{store.Namespace{"users", "u7"}, map[string]any{"bucket": map[string]any{"$lt": 6}}}, // 1 in 60 (u7 holds buckets 1 and 7)
	} {
		for q := range 5 {
			opt := store.SearchOptions{Query: benchText(r), Filter: tc.filter, Limit: 10}
			got, err := hnsw.Search(ctx, tc.prefix, opt)
			must(t, err)
			want, err := flat.Search(ctx, tc.prefix, opt)
			must(t, err)
			if len(got) != len(want) {
				t.Fatalf("prefix %v filter %v query %d: %d items, exact search %d", tc.prefix, tc.filter, q, len(got), len(want))
			}
			// HNSW is approximate: ask for 9 of the exact 10.
			exact := map[string]bool{}
			for _, it := range want {
				exact[it.Namespace.String()+"/"+it.Key] = true
			}
			found := 0
			for _, it := range got {
				if it.Score == nil {
					t.Fatalf("unscored item %s", it.Key)
				}
				if exact[it.Namespace.String()+"/"+it.Key] {
					found++
				}
			}
			if found < len(want)-1 {
				t.Errorf("prefix %v filter %v query %d: %d of the %d nearest\n got %q\nwant %q", tc.prefix, tc.filter, q, found, len(want), keysOf(got), keysOf(want))
			}
		}
	}
}
