// Key-rotation replaces the encryption key of a database. Values are written
// under key A; then key B becomes the primary key with A kept as a previous
// key (it only decrypts), and every stored value is re-encrypted under B.
// After that B alone reads everything, and A alone opens nothing (the
// database is refused, naming the key its data is under): A can be
// retired.
//
// Run it from the repository root:
//
//	go run ./examples/key-rotation
//
// It uses a SQLite file in a temporary directory, or PostgreSQL when
// MEMVAULT_DSN is set (use an empty database or schema: re-encryption
// rewrites every encrypted row in it and stops at one it cannot decrypt).
// In production the keys come from LANGGRAPH_AES_KEY and
// LANGGRAPH_AES_KEY_PREVIOUS, and `memvault keys reencrypt` does step 2.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/reencrypt"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/vault"
)

var (
	thread = checkpointer.Config{ThreadID: "rotation-demo"}
	alice  = store.Namespace{"users", "alice"}
)

func main() {
	ctx := context.Background()
	cfg := config.Default()
	cfg.Embeddings = "none" // this example needs no semantic search
	if cfg.DSN = os.Getenv("MEMVAULT_DSN"); cfg.DSN == "" {
		dir, err := os.MkdirTemp("", "memvault-key-rotation-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(dir)
		cfg.DBPath = filepath.Join(dir, "rotation.db")
	}
	keyA, keyB := newKey(), newKey()

	// 1. Write a checkpoint and a memory under key A.
	with(ctx, cfg, config.Keys{Primary: keyA}, func(h *vault.Handle) error {
		fmt.Printf("1. writing under key A (id %s)\n", h.KeyIDs()[0])
		cp := &checkpointer.Checkpoint{
			V: 4, ID: checkpointer.NewID(-1), TS: time.Now().UTC(),
			ChannelValues:   map[string]any{"messages": []any{"my card number ends in 4242"}},
			ChannelVersions: map[string]string{"messages": h.Saver.NextVersion("")},
		}
		if _, err := h.Saver.Put(ctx, thread, cp, checkpointer.Metadata{"source": "input", "step": -1}, cp.ChannelVersions); err != nil {
			return err
		}
		return h.Store.Put(ctx, alice, "contact", map[string]any{"text": "prefers email"})
	})

	// 2. Rotate: B encrypts, A still decrypts. Re-encrypt every value under B.
	with(ctx, cfg, config.Keys{Primary: keyB, Previous: []string{keyA}}, func(h *vault.Handle) error {
		fmt.Printf("2. primary key B (id %s), previous key A\n", h.KeyIDs()[0])
		saver, st, err := h.Reencrypt(ctx, reencrypt.Options{})
		if err != nil {
			return fmt.Errorf("re-encrypt: %w", err)
		}
		fmt.Printf("   re-encrypted under key B: checkpoint values %d, memories %d\n", saver.Rewritten, st.Rewritten)
		return nil
	})

	// 3. Key B alone reads everything.
	with(ctx, cfg, config.Keys{Primary: keyB}, func(h *vault.Handle) error {
		tup, err := h.Saver.GetTuple(ctx, thread)
		if err != nil {
			return err
		}
		it, err := h.Store.Get(ctx, alice, "contact")
		if err != nil {
			return err
		}
		fmt.Printf("3. key B alone reads: messages %q, memory %q\n", tup.Checkpoint.ChannelValues["messages"], it.Value["text"])
		return nil
	})

	// 4. Key A alone reads nothing any more: it can be retired. Opening
	// with it is refused, naming the key the data is under.
	cfgA := cfg
	cfgA.Keys = config.Keys{Primary: keyA}
	if h, err := vault.Open(ctx, cfgA); !errors.Is(err, vault.ErrKeyNotLoaded) {
		if h != nil {
			h.Close()
		}
		log.Fatalf("key A should no longer open the database; got %v", err)
	} else {
		fmt.Printf("4. key A alone: %v\n", err)
	}

	// Leave the database as we found it, so the example can run again.
	with(ctx, cfg, config.Keys{Primary: keyB}, func(h *vault.Handle) error {
		if err := h.Saver.DeleteThread(ctx, thread.ThreadID); err != nil {
			return err
		}
		return h.Store.Delete(ctx, alice, "contact")
	})
}

// with opens the database with keys, runs fn and closes the database.
func with(ctx context.Context, cfg config.Config, keys config.Keys, fn func(*vault.Handle) error) {
	cfg.Keys = keys
	h, err := vault.Open(ctx, cfg)
	if err != nil {
		log.Fatalf("open: %v", err)
	}
	err = fn(h)
	if cerr := h.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		log.Fatal(err)
	}
}

// newKey makes a random 256-bit key in a form LANGGRAPH_AES_KEY accepts.
func newKey() string {
	k, err := config.GenerateKey()
	if err != nil {
		log.Fatal(err)
	}
	return k
}
