package redisstore_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/backends/redis/redisstore"
	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/engine"
)

// vectorSetOf returns the elements of a store's vector set and each one's
// vector as the server keeps it (VEMB).
func vectorSetOf(t *testing.T, rdb redis.UniversalClient, prefix string) map[string][]float64 {
	t.Helper()
	ctx := context.Background()
	key := "{" + prefix + "}:vs"
	els, err := rdb.Do(ctx, "VRANDMEMBER", key, 1000000).StringSlice()
	if err != nil && err != redis.Nil {
		t.Fatal(err)
	}
	out := map[string][]float64{}
	for _, e := range els {
		raw, err := rdb.Do(ctx, "VEMB", key, e).Slice()
		if err != nil {
			t.Fatal(err)
		}
		v := make([]float64, len(raw))
		for i, x := range raw {
			switch x := x.(type) {
			case float64:
				v[i] = x
			case string:
				_, _ = fmt.Sscan(x, &v[i])
			}
		}
		out[e] = v
	}
	return out
}

func cos(a []float64, b []float32) float64 {
	var d, na, nb float64
	for i := range a {
		d += a[i] * float64(b[i])
		na += a[i] * a[i]
		nb += float64(b[i]) * float64(b[i])
	}
	return d / math.Sqrt(na*nb)
}

// TestSearchThroughVectorSet: on Redis 8 every vector is in the store's
// vector set, searches are settled by VSIM (no exact fallback) with the
// exact ranking's results, deletes and overwrites remove elements, and
// under per-subject keys the set holds the subject's rotated vectors, not
// the embedder's.
func TestSearchThroughVectorSet(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Shared(t, 8)
	rdb := srv.Client(t)
	emb := embeddings.NewUnkeyedHashing(64)
	words := []string{"apple", "banana", "cherry", "date", "elder", "fig", "grape", "kiwi", "lemon", "mango"}
	for _, tc := range []struct {
		name string
		sd   func(t *testing.T) serde.Serializer
	}{
		{"plaintext", func(*testing.T) serde.Serializer { return nil }},
		{"subjects", func(t *testing.T) serde.Serializer { return testkeys.Subjects(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			open := func(noVS bool) (*redisstore.Store, string) {
				p := redistest.Prefix()
				return newStore(t, rdb, redisstore.Options{Prefix: p, NoVectorSets: noVS, Serde: tc.sd(t),
					Index: &store.IndexConfig{Embedder: emb, Fields: []string{"text"}}}), p
			}
			vs, prefix := open(false)
			exact, _ := open(true)
			if !vs.VectorSets() || exact.VectorSets() {
				t.Fatalf("VectorSets: %v, %v", vs.VectorSets(), exact.VectorSets())
			}
			texts := map[string]string{}
			for i := range 60 {
				ns := store.Namespace{"users", fmt.Sprintf("u%d", i%3), "notes"}
				text := words[i%len(words)] + " " + words[(i*7)%len(words)] + fmt.Sprint(" ", i)
				texts[ns.String()+"/"+fmt.Sprint("k", i)] = text
				for _, s := range []*redisstore.Store{vs, exact} {
					if err := s.Put(ctx, ns, fmt.Sprint("k", i), map[string]any{"text": text}); err != nil {
						t.Fatal(err)
					}
				}
			}
			set := vectorSetOf(t, rdb, prefix)
			if len(set) != 60 {
				t.Fatalf("vector set has %d elements, want 60", len(set))
			}
			for e, v := range set {
				k := []byte(e)
				var ns, key string
				for i, b := range k {
					if b == 0 {
						ns = string(k[:i])
						rest := string(k[i+1:])
						for j := range rest {
							if rest[j] == 0 {
								key = rest[:j]
								break
							}
						}
						break
					}
				}
				c := cos(v, emb.Embed(texts[ns+"/"+key]))
				if tc.name == "plaintext" && c < 0.99 {
					t.Fatalf("element %q: cosine %.3f with its text's vector, want the embedder's vector", e, c)
				}
				if tc.name == "subjects" && c > 0.9 {
					t.Fatalf("element %q: cosine %.3f with its text's plaintext vector: a subject's vector must be rotated", e, c)
				}
			}
			for _, q := range []struct {
				prefix store.Namespace
				query  string
			}{{nil, "apple banana"}, {store.Namespace{"users", "u1"}, "cherry"}, {store.Namespace{"users", "u2", "notes"}, "kiwi lemon"}} {
				got, err := vs.Search(ctx, q.prefix, store.SearchOptions{Query: q.query, Limit: 5})
				if err != nil {
					t.Fatal(err)
				}
				want, err := exact.Search(ctx, q.prefix, store.SearchOptions{Query: q.query, Limit: 5})
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want) {
					t.Fatalf("%v %q: %d results, want %d", q.prefix, q.query, len(got), len(want))
				}
				for i := range got {
					if got[i].Key != want[i].Key || math.Abs(*got[i].Score-*want[i].Score) > 1e-6 {
						t.Fatalf("%v %q: result %d %s %v, exact %s %v", q.prefix, q.query, i, got[i].Key, *got[i].Score, want[i].Key, *want[i].Score)
					}
				}
			}
			// A search under one subject is settled by VSIM; one across
			// subjects' spaces (the root, under per-subject keys) is exact.
			before := engine.ExactSearches(vs.Engine)
			if _, err := vs.Search(ctx, store.Namespace{"users", "u0"}, store.SearchOptions{Query: "fig", Limit: 3}); err != nil {
				t.Fatal(err)
			}
			if n := engine.ExactSearches(vs.Engine) - before; n != 0 {
				t.Fatalf("%d searches fell back to an exact ranking", n)
			}
			if err := vs.Delete(ctx, store.Namespace{"users", "u0", "notes"}, "k0"); err != nil {
				t.Fatal(err)
			}
			if err := vs.Put(ctx, store.Namespace{"users", "u1", "notes"}, "k1", map[string]any{"other": "no text"}); err != nil {
				t.Fatal(err)
			}
			if n := len(vectorSetOf(t, rdb, prefix)); n != 58 {
				t.Fatalf("after a delete and an overwrite without text: %d elements, want 58", n)
			}
			if _, err := vs.DeletePrefix(ctx, store.Namespace{"users", "u2"}); err != nil {
				t.Fatal(err)
			}
			if n := len(vectorSetOf(t, rdb, prefix)); n != 38 {
				t.Fatalf("after deleting a prefix of 20 items: %d elements, want 38", n)
			}
		})
	}
}
