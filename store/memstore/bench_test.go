package memstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/memstore"
)

// vecEmbedder returns precomputed random vectors so that benchmarks measure
// the store, not the embedder.
type vecEmbedder struct {
	dims int
}

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

func benchStore(b *testing.B, n, dims int, index bool) *memstore.Store {
	b.Helper()
	opt := memstore.Options{}
	if index {
		opt.Index = &store.IndexConfig{Embedder: vecEmbedder{dims}, Fields: []string{"text"}}
	}
	s, err := memstore.New(opt)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	ctx := context.Background()
	var ops []store.Op
	for i := range n {
		ops = append(ops, store.PutOp{
			Namespace: store.Namespace{"bench", fmt.Sprint(i % 10)},
			Key:       fmt.Sprint(i),
			Value:     map[string]any{"text": fmt.Sprintf("memory number %d", i), "i": i},
		})
	}
	if _, err := s.Batch(ctx, ops); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkSearchQuery ranks 10 000 items of 256 dims against a query.
func BenchmarkSearchQuery(b *testing.B) {
	s := benchStore(b, 10000, 256, true)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		items, err := s.Search(ctx, store.Namespace{"bench"}, store.SearchOptions{Query: "what do I remember", Limit: 10})
		if err != nil || len(items) != 10 {
			b.Fatal(err, len(items))
		}
	}
}

// BenchmarkSearchNoQuery is the baseline: the same scan without scoring.
func BenchmarkSearchNoQuery(b *testing.B) {
	s := benchStore(b, 10000, 256, true)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		items, err := s.Search(ctx, store.Namespace{"bench"}, store.SearchOptions{Limit: 10})
		if err != nil || len(items) != 10 {
			b.Fatal(err, len(items))
		}
	}
}

func BenchmarkGet(b *testing.B) {
	s := benchStore(b, 10000, 0, false)
	ctx := context.Background()
	ns := store.Namespace{"bench", "7"}
	b.ReportAllocs()
	for b.Loop() {
		it, err := s.Get(ctx, ns, "1237")
		if err != nil || it == nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPut(b *testing.B) {
	s := benchStore(b, 0, 0, false)
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
}
