package cache_test

import (
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/cache"
	"github.com/memvault/memvault/store/memstore"
	"github.com/memvault/memvault/store/sqlitestore"
)

// TestEmbedderNameForwarded: the cache names its inner store's embedder —
// the same name, from a memory and a SQLite store — and says it cannot tell
// when the inner store has no index or is not a store.EmbedderNamer: it
// never hides the answer nor makes one up.
func TestEmbedderNameForwarded(t *testing.T) {
	secret := make([]byte, embeddings.HashingKeySize)
	keyed, err := embeddings.NewKeyedHashing(64, secret, "k1")
	if err != nil {
		t.Fatal(err)
	}
	mem, err := memstore.New(memstore.Options{Index: &store.IndexConfig{Embedder: keyed}})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	lite, err := sqlitestore.Open(t.Context(), filepath.Join(t.TempDir(), "s.db"), sqlitestore.Options{Index: &store.IndexConfig{Embedder: embeddings.NewUnkeyedHashing(32)}})
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	noIndex, err := memstore.New(memstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer noIndex.Close()
	for _, c := range []struct {
		name  string
		inner store.Store
		want  string
		ok    bool
	}{
		{"memory", mem, "hash:64+keyed:k1", true},
		{"sqlite", lite, "hash:32", true},
		{"no index", noIndex, "", false},
		{"not a namer", plain{mem}, "", false},
	} {
		c1, err := cache.New(c.inner, cache.Options{})
		if err != nil {
			t.Fatal(err)
		}
		// A cache of a cache forwards too.
		c2, err := cache.New(c1, cache.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range []store.Store{c1, c2} {
			if got, ok := store.EmbedderNameOf(st); got != c.want || ok != c.ok {
				t.Errorf("%s: cache names %q, %v; want %q, %v", c.name, got, ok, c.want, c.ok)
			}
		}
	}
}
