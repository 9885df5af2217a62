package sqlitestore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/engine"
)

// TestVectorCacheDifferential runs the same random puts, re-puts, deletes
// and searches against stores with the cache, without it and with a budget
// too small for it, and requires identical results: with the exact copy
// of small stores, and with the code index alone.
func TestVectorCacheDifferential(t *testing.T) {
	t.Run("ExactCopy", func(t *testing.T) { vectorCacheDifferential(t, true) })
	t.Run("CodeIndex", func(t *testing.T) {
		codeIndexOnly(t)
		vectorCacheDifferential(t, false)
	})
}

func vectorCacheDifferential(t *testing.T, floats bool) {
	ctx := context.Background()
	emb := vecEmbedder{dims: 16}
	var stores []*Store
	for _, budget := range []int64{0, -1, 200} {
		for _, dist := range []store.Distance{store.Cosine} {
			s := openStore(t, ":memory:", Options{
				Index:            &store.IndexConfig{Embedder: emb, Fields: []string{"a", "b"}, Distance: dist},
				VectorCacheBytes: budget,
			})
			defer s.Close()
			stores = append(stores, s)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		ns := store.Namespace{"u", fmt.Sprint(r.IntN(3))}
		key := fmt.Sprint(r.IntN(40))
		var op store.Op
		switch r.IntN(10) {
		case 0, 1:
			op = store.PutOp{Namespace: ns, Key: key} // delete
		case 2:
			op = store.PutOp{Namespace: ns, Key: key, Value: map[string]any{"a": "x"}, Options: store.PutOptions{Index: []string{}}}
		default:
			v := map[string]any{"a": fmt.Sprint("text ", r.IntN(1000))}
			if r.IntN(2) == 0 {
				v["b"] = fmt.Sprint("other ", r.IntN(1000))
			}
			op = store.PutOp{Namespace: ns, Key: key, Value: v}
		}
		search := store.SearchOp{Prefix: store.Namespace{"u"}[:r.IntN(2)], Options: store.SearchOptions{
			Query: fmt.Sprint("q", r.IntN(5)), Limit: 1 + r.IntN(8), Offset: r.IntN(5),
		}}
		var want string
		for i, s := range stores {
			if _, err := s.Batch(ctx, []store.Op{op}); err != nil {
				t.Fatal(err)
			}
			res, err := s.Batch(ctx, []store.Op{search})
			if err != nil {
				t.Fatal(err)
			}
			var got string
			for _, it := range res[0].Items {
				score := "nil"
				if it.Score != nil {
					score = fmt.Sprintf("%.5f", *it.Score)
				}
				got += fmt.Sprintf("%s/%s=%s ", it.Namespace, it.Key, score)
			}
			if i == 0 {
				want = got
			} else if got != want {
				t.Fatalf("round %d: store %d returned\n%s\nwant (cached)\n%s", round, i, got, want)
			}
		}
	}
	if floats {
		if !engine.FloatsLoaded(stores[0].Engine) {
			t.Fatal("the exact copy is not loaded after the run")
		}
		return
	}
	c := stores[0].cache
	if !c.Loaded() {
		t.Fatal("the cache is not loaded after the run")
	}
	if !stores[2].cache.TooBig() {
		t.Fatal("a 200-byte budget did not disable the cache")
	}
}
