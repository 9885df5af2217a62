package redisstore_test

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/backends/redis/redisstore"
	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/store"
)

// Example keeps a user's memories in Redis (here a throwaway Redis 8
// server, whose vector set ranks the search) and searches them by meaning.
func Example() {
	ctx := context.Background()
	srv, err := redistest.Start(redistest.Options{Version: 8})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Stop()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
	defer func() { _ = rdb.Close() }()

	st, err := redisstore.New(ctx, rdb, redisstore.Options{
		Index: &store.IndexConfig{Embedder: embeddings.NewUnkeyedHashing(256), Fields: []string{"text"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = st.Close() }()

	ns := store.Namespace{"users", "ann", "memories"}
	for key, text := range map[string]string{
		"m1": "Ann is allergic to peanuts",
		"m2": "Ann prefers aisle seats on flights",
		"m3": "Ann's daughter plays the violin",
	} {
		if err := st.Put(ctx, ns, key, map[string]any{"text": text}); err != nil {
			fmt.Println(err)
			return
		}
	}
	res, err := st.Search(ctx, store.Namespace{"users", "ann"}, store.SearchOptions{
		Query: "which seat does she like on a plane", Limit: 1,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(st.VectorSets(), res[0].Key, res[0].Value["text"])
	// Output: true m2 Ann prefers aisle seats on flights
}
