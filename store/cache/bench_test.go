package cache_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/cache"
	"github.com/memvault/memvault/store/memstore"
)

func benchInner(b *testing.B) *memstore.Store {
	b.Helper()
	inner, err := memstore.New(memstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { inner.Close() })
	ctx := context.Background()
	for i := range 1000 {
		v := map[string]any{"text": fmt.Sprintf("memory %d", i), "tags": []any{"a", "b"}, "n": i}
		if err := inner.Put(ctx, store.Namespace{"bench"}, fmt.Sprint(i), v); err != nil {
			b.Fatal(err)
		}
	}
	return inner
}

// BenchmarkGetUncached is the baseline: the in-memory store itself.
func BenchmarkGetUncached(b *testing.B) {
	s := benchInner(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if it, err := s.Get(ctx, store.Namespace{"bench"}, "42"); err != nil || it == nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGetCached(b *testing.B) {
	c, _ := cache.New(benchInner(b), cache.Options{})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if it, err := c.Get(ctx, store.Namespace{"bench"}, "42"); err != nil || it == nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetCacheMiss alternates two keys in a cache of one entry, so
// every Get misses: the cost the cache adds on a miss.
func BenchmarkGetCacheMiss(b *testing.B) {
	c, _ := cache.New(benchInner(b), cache.Options{Size: 1})
	ctx := context.Background()
	keys := []string{"1", "2"}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if it, err := c.Get(ctx, store.Namespace{"bench"}, keys[i&1]); err != nil || it == nil {
			b.Fatal(err)
		}
		i++
	}
}
