package vault_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/vault"
)

func Example() {
	dir, err := os.MkdirTemp("", "memvault-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// What FromEnv would read from MEMVAULT_DB and LANGGRAPH_AES_KEY.
	cfg, err := config.FromLookup(func(name string) (string, bool) {
		switch name {
		case "MEMVAULT_DB":
			return filepath.Join(dir, "agent.db"), true
		case "LANGGRAPH_AES_KEY":
			return "0123456789abcdef0123456789abcdef", true
		}
		return "", false
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	h, err := vault.Open(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	fmt.Println(h.Backend, cfg.EffectiveEncryption(), h.Embedder.Name(), cfg.Keys)

	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0),
		ChannelValues:   map[string]any{"messages": []any{"hello"}},
		ChannelVersions: map[string]string{"messages": h.Saver.NextVersion("")}}
	if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: "t1"}, cp, checkpointer.Metadata{"step": 0}, cp.ChannelVersions); err != nil {
		log.Fatal(err)
	}
	t, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "t1"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(t.Checkpoint.ChannelValues["messages"])

	if err := h.Store.Put(ctx, store.Namespace{"users", "alice"}, "contact", map[string]any{"text": "prefers email"}); err != nil {
		log.Fatal(err)
	}
	hits, err := h.Store.Search(ctx, store.Namespace{"users"}, store.SearchOptions{Query: "email", Limit: 1})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(hits[0].Key, hits[0].Value["text"])
	// Output:
	// sqlite envelope hash:256+keyed:4e79a8eafcd4cf2e Keys{primary: set, previous: 0}
	// [hello]
	// contact prefers email
}
