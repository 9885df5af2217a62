package sqlitestore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/memstore"
)

// Benchmarks run each operation on the SQLite store (a WAL file in a temp
// directory) next to the in-memory store as the baseline.

// vecEmbedder returns deterministic pseudo-random vectors so that
// benchmarks measure the store, not the embedder.
type vecEmbedder struct{ dims int }

func (e vecEmbedder) vec(text string) []float32 {
	var seed uint64
	for i := 0; i < len(text); i++ {
		seed = seed*131 + uint64(text[i])
	}
	r := rand.New(rand.NewPCG(seed, 1))
	v := make([]float32, e.dims)
	for i := range v {
		v[i] = r.Float32()*2 - 1
	}
	return v
}

func (e vecEmbedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = e.vec(t)
	}
	return out, nil
}
func (e vecEmbedder) EmbedQuery(_ context.Context, text string) ([]float32, error) {
	return e.vec(text), nil
}
func (e vecEmbedder) Dims() int    { return e.dims }
func (e vecEmbedder) Name() string { return fmt.Sprintf("bench:%d", e.dims) }

type benchBackend struct {
	name string
	open func(b *testing.B, idx *store.IndexConfig) store.Store
}

var benchBackends = []benchBackend{
	{"memory", func(b *testing.B, idx *store.IndexConfig) store.Store {
		s, err := memstore.New(memstore.Options{Index: idx})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	}},
	{"sqlite-file", func(b *testing.B, idx *store.IndexConfig) store.Store {
		s := openStore(b, filepath.Join(b.TempDir(), "bench.db"), Options{Index: idx})
		b.Cleanup(func() { s.Close() })
		return s
	}},
}

// benchStore returns a store holding n items in 10 namespaces under
// ("bench"), each with a 256-dim vector when dims > 0.
func benchStore(b *testing.B, be benchBackend, n, dims int) store.Store {
	b.Helper()
	var idx *store.IndexConfig
	if dims > 0 {
		idx = &store.IndexConfig{Embedder: vecEmbedder{dims}, Fields: []string{"text"}}
	}
	s := be.open(b, idx)
	ctx := context.Background()
	var ops []store.Op
	for i := range n {
		ops = append(ops, store.PutOp{
			Namespace: store.Namespace{"bench", fmt.Sprint(i % 10)},
			Key:       fmt.Sprint(i),
			Value:     map[string]any{"text": fmt.Sprintf("memory number %d", i), "i": i},
		})
		if len(ops) == 1000 {
			if _, err := s.Batch(ctx, ops); err != nil {
				b.Fatal(err)
			}
			ops = ops[:0]
		}
	}
	if _, err := s.Batch(ctx, ops); err != nil {
		b.Fatal(err)
	}
	return s
}

// warmUp runs one search so that the vector cache is loaded before the
// timer starts: the benchmarks measure steady-state searches (see
// BenchmarkVectorCacheLoad for the load).
func warmUp(b *testing.B, s store.Store) {
	b.Helper()
	if _, err := s.Search(context.Background(), store.Namespace{"bench"}, store.SearchOptions{Query: "warm up"}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkVectorCacheLoad is the search that follows a write by another
// process: it reloads the vectors of 10 000 items of 256 dims.
func BenchmarkVectorCacheLoad(b *testing.B) {
	s := benchStore(b, benchBackends[1], 10000, 256).(*Store)
	ctx := context.Background()
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		s.cache.Invalidate()
		if _, err := s.Search(ctx, store.Namespace{"bench"}, store.SearchOptions{Query: "q", Limit: 10}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearchQuery ranks 10 000 items of 256 dims against a query and
// returns the best 10 (k = 10), by exact scan.
func BenchmarkSearchQuery(b *testing.B) {
	for _, be := range benchBackends {
		b.Run(be.name, func(b *testing.B) {
			s := benchStore(b, be, 10000, 256)
			ctx := context.Background()
			warmUp(b, s)
			b.SetBytes(10000 * 256 * 4) // vector bytes scanned per search
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				items, err := s.Search(ctx, store.Namespace{"bench"}, store.SearchOptions{Query: "what do I remember", Limit: 10})
				if err != nil || len(items) != 10 || items[0].Score == nil {
					b.Fatal(err, len(items))
				}
			}
		})
	}
}

// BenchmarkSearchNoQuery lists the 10 most recently updated of 10 000
// items.
func BenchmarkSearchNoQuery(b *testing.B) {
	for _, be := range benchBackends {
		b.Run(be.name, func(b *testing.B) {
			s := benchStore(b, be, 10000, 0)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				items, err := s.Search(ctx, store.Namespace{"bench"}, store.SearchOptions{Limit: 10})
				if err != nil || len(items) != 10 {
					b.Fatal(err, len(items))
				}
			}
		})
	}
}

// BenchmarkGet reads one item of 10 000.
func BenchmarkGet(b *testing.B) {
	for _, be := range benchBackends {
		b.Run(be.name, func(b *testing.B) {
			s := benchStore(b, be, 10000, 0)
			ctx := context.Background()
			ns := store.Namespace{"bench", "7"}
			b.ReportAllocs()
			for b.Loop() {
				it, err := s.Get(ctx, ns, "1237")
				if err != nil || it == nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPut writes one small item (no index) per op.
func BenchmarkPut(b *testing.B) {
	for _, be := range benchBackends {
		b.Run(be.name, func(b *testing.B) {
			s := benchStore(b, be, 0, 0)
			ctx := context.Background()
			ns := store.Namespace{"bench"}
			v := map[string]any{"text": "a memory", "n": 1, "tags": []any{"a", "b"}}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := s.Put(ctx, ns, fmt.Sprint(i%1000), v); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkPutIndexed writes one item with a 256-dim vector per op.
func BenchmarkPutIndexed(b *testing.B) {
	for _, be := range benchBackends {
		b.Run(be.name, func(b *testing.B) {
			s := benchStore(b, be, 0, 256)
			ctx := context.Background()
			ns := store.Namespace{"bench"}
			b.ReportAllocs()
			defer reportCPU(b)()
			i := 0
			for b.Loop() {
				v := map[string]any{"text": fmt.Sprintf("memory %d", i%1000)}
				if err := s.Put(ctx, ns, fmt.Sprint(i%1000), v); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkSearchQueryScale shows how exact search grows with the number of
// items (256 dims), with the vector cache and without it (every search
// reading the vectors from SQLite).
func BenchmarkSearchQueryScale(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		for _, cache := range []int64{0, -1} {
			name := fmt.Sprintf("items=%d/cache=%v", n, cache == 0)
			b.Run(name, func(b *testing.B) {
				be := benchBackend{"sqlite", func(b *testing.B, idx *store.IndexConfig) store.Store {
					s := openStore(b, filepath.Join(b.TempDir(), "scale.db"), Options{Index: idx, VectorCacheBytes: cache})
					b.Cleanup(func() { s.Close() })
					return s
				}}
				s := benchStore(b, be, n, 256)
				ctx := context.Background()
				warmUp(b, s)
				b.SetBytes(int64(n) * 256 * 4)
				b.ReportAllocs()
				defer reportCPU(b)()
				for b.Loop() {
					items, err := s.Search(ctx, store.Namespace{"bench"}, store.SearchOptions{Query: "what do I remember", Limit: 10})
					if err != nil || len(items) != 10 {
						b.Fatal(err, len(items))
					}
				}
			})
		}
	}
}

// BenchmarkSearchSubjects ranks 10 000 items of 256 dims (the clustered
// vectors of BenchmarkSearch1536, which behave as text embeddings do) held
// by 100 data subjects, ("users", "u<n>", …) under per-subject keys
// (testkeys.Subjects): under one subject's namespace and under ("users"),
// which spans every subject, by the exact in-process copy, the code index
// and the exact scan of SQLite.
func BenchmarkSearchSubjects(b *testing.B) {
	const items, dims, subjects = 10000, 256, 100
	g := newClustered(items, dims)
	for _, mode := range []struct {
		name  string
		cache int64
		codes bool
	}{{"floats", 0, false}, {"codes", 0, true}, {"scan", -1, false}} {
		b.Run(mode.name, func(b *testing.B) {
			if mode.codes {
				codeIndexOnly(b)
			}
			s := openStore(b, filepath.Join(b.TempDir(), "subjects.db"), Options{Index: g.index(), Serde: testkeys.Subjects(b), VectorCacheBytes: mode.cache})
			b.Cleanup(func() { s.Close() })
			ctx := context.Background()
			var ops []store.Op
			for i := range items {
				ops = append(ops, store.PutOp{Namespace: store.Namespace{"users", fmt.Sprint("u", i%subjects)}, Key: fmt.Sprint(i),
					Value: map[string]any{"text": fmt.Sprint("v", i)}})
				if len(ops) == 1000 {
					if _, err := s.Batch(ctx, ops); err != nil {
						b.Fatal(err)
					}
					ops = ops[:0]
				}
			}
			for _, prefix := range []store.Namespace{{"users"}, {"users", "u7"}} {
				name := "all"
				if len(prefix) > 1 {
					name = "one"
				}
				b.Run(name, func(b *testing.B) {
					if _, err := s.Search(ctx, prefix, store.SearchOptions{Query: "q0"}); err != nil {
						b.Fatal(err)
					}
					b.ReportAllocs()
					defer reportCPU(b)()
					j := 0
					for b.Loop() {
						got, err := s.Search(ctx, prefix, store.SearchOptions{Query: fmt.Sprint("q", j%100), Limit: 10})
						if err != nil || len(got) != 10 || got[0].Score == nil {
							b.Fatal(err, len(got))
						}
						j++
					}
				})
			}
		})
	}
}

// BenchmarkPutIndexedSubjects writes one item with a 256-dim vector per op
// into one of 100 data subjects' namespaces, under per-subject keys
// (testkeys.Subjects): the value sealed under the subject's key and, with
// subjects' vector spaces, the vector rotated into the subject's space.
func BenchmarkPutIndexedSubjects(b *testing.B) {
	s := openStore(b, filepath.Join(b.TempDir(), "put.db"), Options{Index: &store.IndexConfig{Embedder: vecEmbedder{256}, Fields: []string{"text"}},
		Serde: testkeys.Subjects(b)})
	b.Cleanup(func() { s.Close() })
	ctx := context.Background()
	b.ReportAllocs()
	defer reportCPU(b)()
	i := 0
	for b.Loop() {
		ns := store.Namespace{"users", fmt.Sprint("u", i%100)}
		if err := s.Put(ctx, ns, fmt.Sprint(i%1000), map[string]any{"text": fmt.Sprintf("memory %d", i%1000)}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
