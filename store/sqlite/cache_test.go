package sqlite

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memvault/memvault/store"
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
		if stores[0].floats.snap == nil {
			t.Fatal("the exact copy is not loaded after the run")
		}
		return
	}
	c := stores[0].cache
	if c.snap == nil {
		t.Fatal("the cache is not loaded after the run")
	}
	if !stores[2].cache.tooBig {
		t.Fatal("a 200-byte budget did not disable the cache")
	}
}

func TestCodeIndexCompact(t *testing.T) {
	codeIndexOnly(t)
	tb := newCodeIndex(2, nil)
	cd := func(v []float32) code {
		bits, m, ok := decodeCode(nil, encodeCode(v, nil), 2)
		if !ok {
			t.Fatal("code does not decode")
		}
		return code{bits, m}
	}
	for i := range 10 {
		tb.add("n", fmt.Sprint(i), int64(i), []code{cd([]float32{float32(i), 1}), cd([]float32{1, float32(i)})})
	}
	for i := range 6 {
		tb.remove(itemKey{"n", fmt.Sprint(i)})
	}
	tb.compact()
	if tb.dead != 0 || len(tb.slots) != 4 || len(tb.meta) != 8 || len(tb.bits) != 8 {
		t.Fatalf("after compaction: dead %d, %d slots, %d metas, %d words", tb.dead, len(tb.slots), len(tb.meta), len(tb.bits))
	}
	e := newEstimator(store.InnerProduct, []float32{1, 1}, nil)
	got := map[string]float32{}
	for _, a := range tb.estimateAll(everyNamespace(tb, e), nil) {
		got[string(tb.keyOf(&tb.slots[a.slot]))] = a.est
	}
	for i := 6; i < 10; i++ {
		// Both vectors lie in the query's quadrant: the estimate is |v||q|.
		if want := float32(math.Hypot(float64(i), 1) * math.Sqrt2); math.Abs(float64(got[fmt.Sprint(i)]-want)) > 1e-4 {
			t.Fatalf("item %d estimates %v after compaction, want %v", i, got[fmt.Sprint(i)], want)
		}
	}
	if len(got) != 4 {
		t.Fatalf("%d items estimated, want 4", len(got))
	}
}

// TestCodeIndexFindsItsItems runs random adds, removes, compactions and
// snapshot round trips against a map, from an index loaded in key order
// (the sorted part) through items added out of order (the tail): every
// key is found exactly when it is live, with its latest codes, and a
// search estimates each live item once.
func TestCodeIndexFindsItsItems(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	const dims = 8
	cd := func(tag int64) code {
		v := make([]float32, dims)
		v[tag%dims] = float32(tag + 1)
		bits, m, _ := decodeCode(nil, encodeCode(v, nil), dims)
		return code{bits, m}
	}
	keyOf := func(i int) itemKey { return itemKey{fmt.Sprint("ns.", i%3), fmt.Sprintf("k%03d", i)} }
	model := map[itemKey]int64{}
	ix := newCodeIndex(dims, nil)
	// A load appends in key order: namespaces, then keys.
	for ns := range 3 {
		for i := ns; i < 300; i += 3 {
			if r.IntN(2) == 0 {
				k, upd := keyOf(i), int64(r.IntN(1000))
				ix.add(k.ns, k.key, upd, []code{cd(upd)})
				model[k] = upd
			}
		}
	}
	if ix.sorted != len(ix.slots) || ix.tail != nil {
		t.Fatalf("an index loaded in key order has %d of %d slots sorted and a tail of %d", ix.sorted, len(ix.slots), len(ix.tail))
	}
	check := func(step int) {
		t.Helper()
		for i := range 300 {
			k := keyOf(i)
			want, live := model[k]
			s, found := ix.lookup(k)
			if found != live || (found && (ix.slots[s].updated != want || !ix.slots[s].live || string(ix.keyOf(&ix.slots[s])) != k.key)) {
				t.Fatalf("step %d: %v found %v (slot %d), want live %v, updated %d", step, k, found, s, live, want)
			}
		}
		seen := map[itemKey]bool{}
		for _, a := range ix.estimateAll(everyNamespace(ix, newEstimator(store.InnerProduct, make([]float32, dims), nil)), nil) {
			s := ix.slots[a.slot]
			k := ix.itemKeyOf(&s)
			if seen[k] || model[k] != s.updated {
				t.Fatalf("step %d: search estimated %v twice or stale", step, k)
			}
			seen[k] = true
		}
		if len(seen) != len(model) || ix.live != len(model) {
			t.Fatalf("step %d: %d estimated, %d live, want %d", step, len(seen), ix.live, len(model))
		}
	}
	check(0)
	compactions := 0
	for step := 1; step <= 3000; step++ {
		k := keyOf(r.IntN(300))
		switch op := r.IntN(200); {
		case op < 100:
			upd := int64(r.IntN(1000))
			ix.add(k.ns, k.key, upd, []code{cd(upd), cd(upd + 1)})
			model[k] = upd
		case op < 185:
			ix.remove(k)
			delete(model, k)
		case op < 199:
			due := ix.dead > 0 && 2*ix.dead >= len(ix.meta)
			if due {
				compactions++
			}
			ix.compact()
			if due && (ix.tail != nil || ix.sorted != len(ix.slots)) {
				t.Fatalf("step %d: compacted, %d of %d slots sorted and a tail of %d", step, ix.sorted, len(ix.slots), len(ix.tail))
			}
		default:
			again := newCodeIndex(dims, nil)
			for _, p := range ix.serialize(1) {
				if err := again.deserialize(p, 1); err != nil {
					t.Fatalf("step %d: the snapshot does not load: %v", step, err)
				}
			}
			if again.tail != nil || again.sorted != len(again.slots) {
				t.Fatalf("step %d: a loaded snapshot has a tail of %d", step, len(again.tail))
			}
			ix = again
		}
		check(step)
	}
	if compactions == 0 {
		t.Fatal("no compaction was due: the test checks none")
	}
}

// everyNamespace is the estimators of a search of every namespace of t in
// one space, with e.
func everyNamespace(t *codeIndex, e *estimator) []*estimator {
	ests := make([]*estimator, len(t.names))
	for i := range ests {
		ests[i] = e
	}
	return ests
}
