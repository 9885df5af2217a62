package recall_test

import (
	"fmt"

	"github.com/memvault/memvault/adapters/shared/recall"
	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/memstore"
)

// An adapter asks MinScore for its store's threshold when the caller set
// none: the hashing embedder gets HashingMinScore, a store without a
// semantic index gets no threshold (the adapter then ranks).
func ExampleMinScore() {
	hashed, err := memstore.New(memstore.Options{Index: &store.IndexConfig{
		Embedder: embeddings.NewUnkeyedHashing(256),
		Fields:   []string{"text"},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer hashed.Close()
	plain, err := memstore.New(memstore.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer plain.Close()

	fmt.Println(recall.MinScore(hashed))
	fmt.Println(recall.MinScore(plain))
	// Output:
	// 0.1 true
	// 0 false
}
