package audit_test

import (
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/cache"
	"github.com/memvault/memvault/store/memstore"
	"github.com/memvault/memvault/store/sqlitestore"
)

// TestStoreEmbedderNameForwarded: the audited store names its inner
// store's embedder, also through a cache, and says it cannot tell when the
// inner store has no index or is not a store.EmbedderNamer (it never hides
// the answer nor makes one up). Naming the embedder records nothing.
func TestStoreEmbedderNameForwarded(t *testing.T) {
	secret := make([]byte, embeddings.HashingKeySize)
	keyed, err := embeddings.NewKeyedHashing(64, secret, "k1")
	must(t, err)
	mem, err := memstore.New(memstore.Options{Index: &store.IndexConfig{Embedder: keyed}})
	must(t, err)
	defer mem.Close()
	lite, err := sqlitestore.Open(t.Context(), filepath.Join(t.TempDir(), "s.db"), sqlitestore.Options{Index: &store.IndexConfig{Embedder: embeddings.NewUnkeyedHashing(32)}})
	must(t, err)
	defer lite.Close()
	cached, err := cache.New(lite, cache.Options{})
	must(t, err)
	noIndex, err := memstore.New(memstore.Options{})
	must(t, err)
	defer noIndex.Close()
	table := audit.NewMemoryTable()
	tr := trail(t, table)
	for _, c := range []struct {
		name  string
		inner store.Store
		want  string
		ok    bool
	}{
		{"memory", mem, "hash:64+keyed:k1", true},
		{"sqlite through a cache", cached, "hash:32", true},
		{"no index", noIndex, "", false},
		{"not a namer", bareStore{mem}, "", false},
	} {
		st := audit.NewStore(c.inner, tr, nil)
		if got, ok := store.EmbedderNameOf(st); got != c.want || ok != c.ok {
			t.Errorf("%s: audited store names %q, %v; want %q, %v", c.name, got, ok, c.want, c.ok)
		}
	}
	n, err := tr.Verify(t.Context())
	must(t, err)
	if n != 0 {
		t.Errorf("naming the embedder recorded %d entries", n)
	}
}
