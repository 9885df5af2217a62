package vault_test

import (
	"bytes"
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

// ExampleOpenEnv is the README's quick start: the process environment
// says where the database is and which key seals it, and nothing of what
// the agent stored is in clear in the file.
func ExampleOpenEnv() {
	dir, err := os.MkdirTemp("", "memvault-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// What a deployment exports (this example restores the environment).
	defer restoreEnv("MEMVAULT_DB", "LANGGRAPH_AES_KEY")()
	os.Setenv("MEMVAULT_DB", filepath.Join(dir, "agent.db"))
	os.Setenv("LANGGRAPH_AES_KEY", "0123456789abcdef0123456789abcdef")
	ctx := context.Background()

	h, err := vault.OpenEnv(ctx) // MEMVAULT_DB or MEMVAULT_DSN, LANGGRAPH_AES_KEY, … (config.FromEnv)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	newVersions := map[string]string{"messages": h.Saver.NextVersion("")}
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"messages": []any{"my parcel is late"}}, ChannelVersions: newVersions}
	md := checkpointer.Metadata{"source": "input", "step": 0}
	next, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: "t1"}, cp, md, newVersions)
	if err != nil {
		log.Fatal(err)
	}
	tuple, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "t1"})
	if err != nil {
		log.Fatal(err)
	}
	err = h.Store.Put(ctx, store.Namespace{"users", "alice"}, "contact", map[string]any{"text": "prefers email"})
	if err != nil {
		log.Fatal(err)
	}
	hits, err := h.Store.Search(ctx, store.Namespace{"users"}, store.SearchOptions{Query: "how to reach her"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(next.CheckpointID == tuple.Checkpoint.ID, tuple.Checkpoint.ChannelValues["messages"], hits[0].Key, h.KeyIDs() != nil)

	h.Close()
	fmt.Println("in clear on disk:", onDisk(dir, "my parcel is late") || onDisk(dir, "prefers email"))
	// Output:
	// true [my parcel is late] contact true
	// in clear on disk: false
}

// restoreEnv returns a function that sets names back to their values now.
func restoreEnv(names ...string) func() {
	old := map[string]*string{}
	for _, n := range names {
		if v, ok := os.LookupEnv(n); ok {
			old[n] = &v
		} else {
			old[n] = nil
		}
	}
	return func() {
		for n, v := range old {
			if v == nil {
				os.Unsetenv(n)
			} else {
				os.Setenv(n, *v)
			}
		}
	}
}

// onDisk reports whether a file of dir holds s.
func onDisk(dir, s string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			log.Fatal(err)
		}
		if bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}
