package cache_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/cache"
	"github.com/memvault/memvault/store/memstore"
	"github.com/memvault/memvault/store/sqlitestore"
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

// benchSealed is a cache over a SQLite store sealing ("users", <subject>)
// under the subject's keys, holding one item of carol's and one of no
// subject, both read once.
func benchSealed(b *testing.B) (cache.Cache, store.Namespace, store.Namespace) {
	b.Helper()
	ctx := context.Background()
	st, err := sqlitestore.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), sqlitestore.Options{Serde: testkeys.Subjects(b)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	c, _ := cache.New(st, cache.Options{})
	carol, shared := store.Namespace{"users", "carol"}, store.Namespace{"shared"}
	v := map[string]any{"text": "memory 42", "tags": []any{"a", "b"}, "n": 42}
	for _, ns := range []store.Namespace{carol, shared} {
		if err := c.Put(ctx, ns, "42", v); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Get(ctx, ns, "42"); err != nil {
			b.Fatal(err)
		}
	}
	return c, carol, shared
}

// BenchmarkGetSealedSubject reads a data subject's item through the
// cache: since session 33 every such Get reaches the store (a SQLite
// read and a decryption under the subject's key), which is what keeps a
// forgotten subject's item from being served.
func BenchmarkGetSealedSubject(b *testing.B) {
	c, carol, _ := benchSealed(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if it, err := c.Get(ctx, carol, "42"); err != nil || it == nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetSealedShared reads an item of no subject of the same store
// through the cache: a hit.
func BenchmarkGetSealedShared(b *testing.B) {
	c, _, shared := benchSealed(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if it, err := c.Get(ctx, shared, "42"); err != nil || it == nil {
			b.Fatal(err)
		}
	}
}
