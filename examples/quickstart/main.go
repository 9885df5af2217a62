// Quickstart shows memvault on its embedded default: one SQLite file and the
// offline hashing embedder, no server. It saves two checkpoints of a
// conversation, reads the latest one back, then stores memories about the
// user and finds one again by meaning.
//
// Run it from the repository root:
//
//	go run ./examples/quickstart
//
// The database goes to a temporary directory, or to MEMVAULT_DB when that is
// set (the file is then kept).
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/vault"
)

func main() {
	ctx := context.Background()
	// The environment's configuration (SQLite, offline embeddings, no
	// encryption until LANGGRAPH_AES_KEY is exported), on a temporary
	// file unless MEMVAULT_DB names one.
	cfg, err := config.FromEnv()
	if err != nil {
		log.Fatal(err)
	}
	if os.Getenv("MEMVAULT_DB") == "" {
		dir, err := os.MkdirTemp("", "memvault-quickstart-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(dir)
		cfg.DBPath = filepath.Join(dir, "quickstart.db")
	}
	h, err := vault.Open(ctx, cfg)
	if err != nil {
		log.Fatalf("open: %v", err)
	}
	defer h.Close()

	// Two steps of a conversation, saved as a graph runtime saves them: each
	// checkpoint holds the state, and Put returns the config of the new
	// checkpoint, which is the parent of the next one.
	thread := checkpointer.Config{ThreadID: "quickstart"}
	var messages []any
	version := ""
	for step, text := range []string{"user: my parcel is late", "agent: sorry! which order is it?"} {
		messages = append(messages, text)
		version = h.Saver.NextVersion(version)
		cp := &checkpointer.Checkpoint{
			V: 4, ID: checkpointer.NewID(step), TS: time.Now().UTC(),
			ChannelValues:   map[string]any{"messages": messages},
			ChannelVersions: map[string]string{"messages": version},
		}
		md := checkpointer.Metadata{"source": "loop", "step": step}
		if thread, err = h.Saver.Put(ctx, thread, cp, md, cp.ChannelVersions); err != nil {
			log.Fatalf("save step %d: %v", step, err)
		}
	}
	latest, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "quickstart"})
	if err != nil {
		log.Fatalf("read latest: %v", err)
	}
	fmt.Printf("latest checkpoint (step %v): %q\n", latest.Metadata["step"], latest.Checkpoint.ChannelValues["messages"])

	// Long-term memory lives in the store, shared across threads.
	alice := store.Namespace{"users", "alice"}
	if err := h.Store.Put(ctx, alice, "contact", map[string]any{"text": "prefers email, never phone calls"}); err != nil {
		log.Fatalf("remember: %v", err)
	}
	if err := h.Store.Put(ctx, alice, "diet", map[string]any{"text": "vegetarian, allergic to peanuts"}); err != nil {
		log.Fatalf("remember: %v", err)
	}
	hits, err := h.Store.Search(ctx, alice, store.SearchOptions{Query: "should we phone her or send an email?", Limit: 1})
	if err != nil || len(hits) == 0 {
		log.Fatalf("search: %v (hits: %d)", err, len(hits))
	}
	fmt.Printf("recalled %s: %q (score %.2f)\n", hits[0].Key, hits[0].Value["text"], *hits[0].Score)
}
