package sqlitestore

import (
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/vecindex"
)

// TestCommittedAllocatesNothing: handing a committed write to the index
// allocates nothing of its own (the index applies what it can use; an
// index not loaded yet, as here, uses nothing). When the index became a
// package of its own, every write, of an indexed store or not, allocated
// a slice of its changes.
func TestCommittedAllocatesNothing(t *testing.T) {
	s := openStore(t, filepath.Join(t.TempDir(), "c.db"), Options{Index: &store.IndexConfig{Embedder: vecEmbedder{8}, Fields: []string{"text"}}})
	defer s.Close()
	if !s.cache.Enabled() {
		t.Fatal("the index is not enabled")
	}
	changes := []vecindex.Change{{Key: store.RowKey{NS: "a", Key: "k"}}}
	gen := int64(1)
	if n := testing.AllocsPerRun(100, func() {
		s.cache.Committed(gen, changes, 1, false)
		gen++
	}); n != 0 {
		t.Errorf("committed allocated %v times per write, want 0", n)
	}
}
