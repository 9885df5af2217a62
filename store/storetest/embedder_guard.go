package storetest

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/store"
)

// RunEmbedderGuard checks that a backend refuses to search vectors made by
// another embedder: open must return a store on the same storage each time
// it is called, set up with the given index (open may return the error of
// its constructor or Setup). The store is opened with one embedder, an item
// is stored, and opening again with an embedder of another name, or of the
// same name and another size, must fail with store.ErrEmbedderMismatch,
// while the first embedder still opens.
func RunEmbedderGuard(t *testing.T, open func(t *testing.T, idx *store.IndexConfig) (store.Store, error)) {
	t.Helper()
	ctx := context.Background()
	first := embeddings.NewUnkeyedHashing(16)
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
	// The same name at another size — a custom embedder, or a model with
	// a dimensions option, whose name does not say its size: its searches
	// would find nothing and its vectors would not mix with the stored
	// ones. The error names both sizes.
	for _, dims := range []int{first.Dims() / 2, first.Dims() * 2} {
		resized := Renamed(embeddings.NewUnkeyedHashing(dims), first.Name())
		s, err := open(t, &store.IndexConfig{Embedder: resized, Dims: dims, Fields: []string{"text"}})
		var mm *store.EmbedderMismatchError
		if !errors.Is(err, store.ErrEmbedderMismatch) || !errors.As(err, &mm) || mm.RecordedDims != first.Dims() || mm.ConfiguredDims != dims {
			if err == nil {
				closeStore(t, s)
			}
			t.Fatalf("open with %q at %d dimensions over its vectors of %d: err = %v, want ErrEmbedderMismatch naming both sizes", resized.Name(), dims, first.Dims(), err)
		}
		if msg := err.Error(); !strings.Contains(msg, strconv.Itoa(dims)) || !strings.Contains(msg, strconv.Itoa(first.Dims())) {
			t.Fatalf("the mismatch error does not name both sizes (%d, %d): %v", first.Dims(), dims, err)
		}
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

// Renamed returns e under another name: an embedder that keeps a model's
// name whatever size it is asked for (a custom one, or a model with a
// dimensions option), as the embedder guards must tell apart by size.
func Renamed(e embeddings.Embedder, name string) embeddings.Embedder {
	return renamed{Embedder: e, name: name}
}

type renamed struct {
	embeddings.Embedder
	name string
}

func (r renamed) Name() string { return r.name }
