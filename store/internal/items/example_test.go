package items_test

import (
	"fmt"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/internal/items"
)

// ExamplePrepare shows what a put becomes before any backend sees it: the
// value in memvault's JSON model, the TTL resolved, the texts to embed.
func ExamplePrepare() {
	index := &store.IndexConfig{Fields: []string{"text"}, Dims: 4}
	ttl := &store.TTLConfig{DefaultTTL: 3600e9}
	p, err := items.Prepare(store.PutOp{
		Namespace: store.Namespace{"users", "alice"},
		Key:       "contact",
		Value:     map[string]any{"text": "prefers email", "tier": 3},
	}, ttl, index)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s/%s ttl=%s tier=%T reindex=%v texts=%d\n", p.Prefix, p.Key, p.TTL, p.Value["tier"], p.Reindex, len(p.Texts))
	_, err = items.Prepare(store.PutOp{Namespace: store.Namespace{"users"}, Key: "k", Value: map[string]any{},
		Options: store.PutOptions{Index: []string{"text"}}}, nil, nil)
	fmt.Println(err)
	// Output:
	// users.alice/contact ttl=1h0m0s tier=int64 reindex=true texts=1
	// store: no index configured: WithIndex["text"]
}
