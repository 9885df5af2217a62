package cache_test

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/cache"
	"github.com/memvault/memvault/store/memstore"
)

func Example() {
	ctx := context.Background()
	inner, _ := memstore.New(memstore.Options{})
	s, err := cache.New(inner, cache.Options{Size: 1000})
	if err != nil {
		panic(err)
	}
	defer s.Close()

	ns := store.Namespace{"users", "u1"}
	_ = s.Put(ctx, ns, "profile", map[string]any{"name": "Ada"})
	for range 3 {
		it, _ := s.Get(ctx, ns, "profile")
		fmt.Println(it.Value["name"])
	}
	st := s.Stats()
	fmt.Printf("hits=%d misses=%d\n", st.Hits, st.Misses)
	// Output:
	// Ada
	// Ada
	// Ada
	// hits=2 misses=1
}
