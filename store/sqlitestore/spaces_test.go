package sqlitestore

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/store"
)

// TestSubjectSpacesSearchIsExact: with per-subject keys each user's
// vectors live in a space of their own (package spaces); searches under
// one user's namespace, under ("users") (every user, and the items of
// ("users") itself, of no subject) and under the root rank exactly as the
// same store without subjects' spaces does (same items, same scores up to
// float32 rounding), by the exact in-process copy, by the code index
// (whose codes and centre are made from the rotated vectors) and by the
// exact scan of SQLite alike; and once a user's keys are destroyed, her
// items are left out of every search, with no error.
func TestSubjectSpacesSearchIsExact(t *testing.T) {
	ctx := context.Background()
	const items, dims = 1500, 256
	for _, dist := range []store.Distance{store.Cosine, store.L2, store.InnerProduct} {
		t.Run(string(dist), func(t *testing.T) {
			emb := scaledEmbedder{newClustered(items, dims)}
			idx := &store.IndexConfig{Embedder: emb, Dims: dims, Fields: []string{"a", "b"}, Distance: dist}
			subjects := testkeys.Subjects(t)
			path := filepath.Join(t.TempDir(), "subjects.db")
			floats := openStore(t, path, Options{Index: idx, Serde: subjects})
			defer floats.Close()
			plain := openStore(t, filepath.Join(t.TempDir(), "plain.db"), Options{Index: idx, Serde: testkeys.Encrypting(t)})
			defer plain.Close()
			nsOf := func(i int) store.Namespace {
				switch i % 10 {
				case 0:
					return store.Namespace{"users"}
				case 5:
					return store.Namespace{"other", fmt.Sprint(i % 3)}
				}
				return store.Namespace{"users", fmt.Sprint("u", i%20), fmt.Sprint(i % 2)}
			}
			var ops []store.Op
			for i := range items {
				v := map[string]any{"a": fmt.Sprint("v", i)}
				if i%3 == 0 {
					v["b"] = fmt.Sprint("v", (i*7)%items)
				}
				ops = append(ops, store.PutOp{Namespace: nsOf(i), Key: fmt.Sprint(i), Value: v})
			}
			for _, s := range []*Store{floats, plain} {
				if _, err := s.Batch(ctx, ops); err != nil {
					t.Fatal(err)
				}
			}
			codeIndexOnly(t)
			codes := openStore(t, path, Options{Index: idx, Serde: subjects})
			defer codes.Close()
			scan := openStore(t, path, Options{Index: idx, Serde: subjects, VectorCacheBytes: -1})
			defer scan.Close()

			r := rand.New(rand.NewPCG(5, 6))
			prefixes := []store.Namespace{nil, {"users"}, {"users", "u3"}, {"users", "u7", "1"}, {"other"}}
			check := func(gone string) {
				t.Helper()
				for range 40 {
					opt := store.SearchOptions{Query: fmt.Sprint("q", r.IntN(1000)), Limit: 1 + r.IntN(12), Offset: r.IntN(3) * r.IntN(10)}
					p := prefixes[r.IntN(len(prefixes))]
					want := results(t, scan, p, opt)
					for name, s := range map[string]*Store{"the exact copy": floats, "the code index": codes} {
						if got := results(t, s, p, opt); got != want {
							t.Fatalf("%v %+v: %s returned\n%s\nthe exact scan\n%s", p, opt, name, got, want)
						}
					}
					got, err := scan.Search(ctx, p, opt)
					if err != nil {
						t.Fatal(err)
					}
					// The store without subjects' spaces ranks the same
					// items, the erased user's left out.
					off := opt.Offset
					opt.Limit, opt.Offset = off+opt.Limit+20, 0
					all, err := plain.Search(ctx, p, opt)
					if err != nil {
						t.Fatal(err)
					}
					var ref []store.SearchItem
					refScore := map[string]float64{}
					for _, it := range all {
						if gone == "" || !strings.HasPrefix(it.Namespace.String(), "users."+gone+".") {
							ref = append(ref, it)
							refScore[it.Key] = *it.Score
						}
					}
					ref = ref[min(len(ref), off):]
					ref = ref[:min(len(ref), len(got))]
					if len(got) != len(ref) {
						t.Fatalf("%v %+v: %d items, without spaces %d", p, opt, len(got), len(ref))
					}
					// Equal scores, the same items but for exact ties (the
					// same text embedded for two users, say), which
					// rounding may order either way.
					for i := range got {
						tol := 1e-5 * max(1, math.Abs(*ref[i].Score))
						rs, ok := refScore[got[i].Key]
						if !ok || math.Abs(*got[i].Score-*ref[i].Score) > tol || math.Abs(rs-*ref[i].Score) > tol {
							t.Fatalf("%v %+v: item %d is %s %v, without spaces %s %v", p, opt, i, got[i].Key, *got[i].Score, ref[i].Key, *ref[i].Score)
						}
					}
				}
			}
			check("")
			if !codes.cache.Loaded() || codes.cache.Stats.Rescored.Load() == 0 {
				t.Fatal("the code index ranked nothing")
			}
			if _, err := subjects.DestroyKeys(ctx, "u3"); err != nil {
				t.Fatal(err)
			}
			check("u3")
		})
	}
}
