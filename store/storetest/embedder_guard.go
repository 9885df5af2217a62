package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/store"
)

// RunEmbedderGuard checks that a backend refuses to search vectors made by
// another embedder: open must return a store on the same storage each time
// it is called, set up with the given index (open may return the error of
// its constructor or Setup). The store is opened with one embedder, an item
// is stored, and opening again with an embedder of another name must fail
// with store.ErrEmbedderMismatch, while the first embedder still opens.
func RunEmbedderGuard(t *testing.T, open func(t *testing.T, idx *store.IndexConfig) (store.Store, error)) {
	t.Helper()
	ctx := context.Background()
	first := embeddings.NewHashing(16)
	s, err := open(t, &store.IndexConfig{Embedder: first, Dims: first.Dims(), Fields: []string{"text"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, store.Namespace{"a"}, "k", map[string]any{"text": "hello"}); err != nil {
		t.Fatal(err)
	}
	closeStore(t, s)

	other := NewAxisEmbedder("hello", "world") // another name, other dimensions
	if s, err := open(t, &store.IndexConfig{Embedder: other, Dims: other.Dims(), Fields: []string{"text"}}); !errors.Is(err, store.ErrEmbedderMismatch) {
		if err == nil {
			closeStore(t, s)
		}
		t.Fatalf("open with %s over vectors of %s: err = %v, want ErrEmbedderMismatch", other.Name(), first.Name(), err)
	}
	s, err = open(t, &store.IndexConfig{Embedder: first, Dims: first.Dims(), Fields: []string{"text"}})
	if err != nil {
		t.Fatalf("reopen with the same embedder: %v", err)
	}
	res, err := s.Search(ctx, store.Namespace{"a"}, store.SearchOptions{Query: "hello"})
	if err != nil || len(res) != 1 || res[0].Score == nil {
		t.Fatalf("search after reopen: %v, %v", res, err)
	}
	closeStore(t, s)
}
