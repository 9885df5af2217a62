package sqlitestore_test

import (
	"context"
	"fmt"
	"log"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/sqlitestore"
)

// Memories of a user, searched by meaning and by filter.
func Example() {
	ctx := context.Background()
	st, err := sqlitestore.Open(ctx, ":memory:", sqlitestore.Options{
		Index: &store.IndexConfig{Embedder: embeddings.NewUnkeyedHashing(256), Fields: []string{"text"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()

	ns := store.Namespace{"users", "ann", "memories"}
	for key, text := range map[string]string{
		"m1": "Ann is allergic to peanuts",
		"m2": "Ann prefers aisle seats on flights",
		"m3": "Ann's daughter plays the violin",
	} {
		if err := st.Put(ctx, ns, key, map[string]any{"text": text, "kind": "fact"}); err != nil {
			log.Fatal(err)
		}
	}

	res, err := st.Search(ctx, store.Namespace{"users", "ann"}, store.SearchOptions{
		Query: "which seat does she like on a plane", Limit: 1,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res[0].Key, res[0].Value["text"])

	it, err := st.Get(ctx, ns, "m1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(it.Value["text"])

	nss, err := st.ListNamespaces(ctx, store.ListNamespacesOptions{Prefix: store.Namespace{"users"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(nss)
	// Output:
	// m2 Ann prefers aisle seats on flights
	// Ann is allergic to peanuts
	// [users.ann.memories]
}
