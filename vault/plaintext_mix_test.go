package vault

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/reencrypt"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
)

// TestPlaintextDatabaseWithKeyRefused: a database written in plaintext (no
// key) and then opened with a key loaded. It used to open: new writes went
// in encrypted beside the plaintext rows, the keyed reader then failed on
// every plaintext row ("plaintext value refused") and a reader without the
// key on every encrypted one ("malformed value envelope … the store has no
// serializer"). README's rule is that reading is strict and
// MEMVAULT_ALLOW_PLAINTEXT=true is the migration mode; so Open refuses
// (ErrPlaintextData, wrapping serde.ErrPlaintextRefused) naming the way out
// — the migration, or staying in plaintext — and writes nothing. With
// DangerousAllowPlaintext the documented migration runs, after which the
// strict configuration opens. On SQLite and PostgreSQL; with checkpoint
// values only, memories only, and both.
func TestPlaintextDatabaseWithKeyRefused(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		for _, what := range []string{"checkpoints", "memories", "both"} {
			t.Run(backend+"/"+what, func(t *testing.T) {
				c := config.Default()
				c.TTL.SweepInterval = -1
				if backend == "sqlite" {
					c.DBPath = filepath.Join(t.TempDir(), "m.db")
				} else {
					c.DSN = pgtest.SchemaDSN(t)
				}
				c.Embeddings = "none"
				h, err := Open(ctx, c)
				if err != nil {
					t.Fatal(err)
				}
				cfg := checkpointer.Config{ThreadID: "t1"}
				if what != "memories" {
					v := h.Saver.NextVersion("")
					cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now().UTC(),
						ChannelValues: map[string]any{"messages": []any{"plain"}}, ChannelVersions: map[string]string{"messages": v}}
					if cfg, err = h.Saver.Put(ctx, cfg, cp, checkpointer.Metadata{"source": "input", "step": -1}, cp.ChannelVersions); err != nil {
						t.Fatal(err)
					}
					if err := h.Saver.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "messages", Value: "w"}, {Channel: "x", Value: nil}}, "task-1", ""); err != nil {
						t.Fatal(err)
					}
				}
				if what != "checkpoints" {
					if err := h.Store.Put(ctx, store.Namespace{"users", "a"}, "k", map[string]any{"text": "plain"}); err != nil {
						t.Fatal(err)
					}
				}
				h.Close()

				c.Keys.Primary = testkeys.Key
				_, err = Open(ctx, c)
				if !errors.Is(err, ErrPlaintextData) || !errors.Is(err, serde.ErrPlaintextRefused) {
					t.Fatalf("a plaintext database opened with a key: %v, want ErrPlaintextData", err)
				}
				for _, s := range []string{"MEMVAULT_ALLOW_PLAINTEXT=true", "keys reencrypt", "LANGGRAPH_AES_KEY"} {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("the refusal does not name %q: %v", s, err)
					}
				}

				// The documented migration: allow plaintext, re-encrypt, strict again.
				c.DangerousAllowPlaintext = true
				h, err = Open(ctx, c)
				if err != nil {
					t.Fatal(err)
				}
				if _, _, err := h.Reencrypt(ctx, reencrypt.Options{}); err != nil {
					t.Fatal(err)
				}
				h.Close()
				c.DangerousAllowPlaintext = false
				h, err = Open(ctx, c)
				if err != nil {
					t.Fatalf("strict open after the migration: %v", err)
				}
				defer h.Close()
				if what != "memories" {
					if tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "t1"}); err != nil || tup == nil || len(tup.PendingWrites) != 2 {
						t.Fatalf("after migration: %v %v", tup, err)
					}
				}
				if what != "checkpoints" {
					if it, err := h.Store.Get(ctx, store.Namespace{"users", "a"}, "k"); err != nil || it == nil {
						t.Fatalf("after migration: %v %v", it, err)
					}
				}
			})
		}
	}
}
