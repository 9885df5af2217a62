package memstore_test

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/memstore"
)

func Example() {
	ctx := context.Background()
	s, err := memstore.New(memstore.Options{Index: &store.IndexConfig{
		Embedder: embeddings.NewUnkeyedHashing(256),
		Fields:   []string{"text"},
	}})
	if err != nil {
		panic(err)
	}
	defer s.Close()

	user := store.Namespace{"users", "u1", "memories"}
	_ = s.Put(ctx, user, "m1", map[string]any{"text": "prefers window seats on long flights"})
	_ = s.Put(ctx, user, "m2", map[string]any{"text": "allergic to peanuts"})
	_ = s.Put(ctx, user, "m3", map[string]any{"text": "no text field"}, store.WithoutIndex())

	items, _ := s.Search(ctx, store.Namespace{"users", "u1"}, store.SearchOptions{Query: "flight seats", Limit: 3})
	for _, it := range items {
		fmt.Println(it.Key, it.Score != nil)
	}
	// Output:
	// m1 true
	// m2 true
	// m3 false
}
