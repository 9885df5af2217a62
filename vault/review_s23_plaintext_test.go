package vault

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/store"
)

// TestReviewS23MixedDatabaseOpenedWithoutKey (session 23 review): Open's
// key check (checkValueKeys) reads the first value of checkpoint_blobs,
// checkpoint_writes and store only. A database holding encrypted values
// whose first rows are plaintext is opened without a key, and the keyless
// process writes a new secret in plaintext beside the encrypted rows —
// what ErrKeyNotLoaded exists to stop ("sealed while no key is loaded").
//
//   - migration: a plaintext database opened in the documented migration
//     mode (key + MEMVAULT_ALLOW_PLAINTEXT) that wrote encrypted values
//     before `keys reencrypt` ran; a cron job without LANGGRAPH_AES_KEY.
//   - injected: a wholly encrypted database into which whoever can write
//     the file put one plaintext row per table at rowid -1 (SQLite scans
//     rowid order): every misconfigured keyless process from then on is
//     accepted and writes its secrets in the clear.
func TestReviewS23MixedDatabaseOpenedWithoutKey(t *testing.T) {
	for _, mode := range []string{"migration", "injected"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			c := config.Default()
			c.TTL.SweepInterval = -1
			c.DBPath = filepath.Join(t.TempDir(), "m.db")
			c.Embeddings = "none"
			put := func(h *Handle, thread, text string) {
				t.Helper()
				v := h.Saver.NextVersion("")
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now().UTC(),
					ChannelValues: map[string]any{"notes": text}, ChannelVersions: map[string]string{"notes": v}}
				cfg, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, checkpointer.Metadata{}, cp.ChannelVersions)
				if err != nil {
					t.Fatal(err)
				}
				if err := h.Saver.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "notes", Value: text}}, "task-1", ""); err != nil {
					t.Fatal(err)
				}
				if err := h.Store.Put(ctx, store.Namespace{"users", thread}, "k", map[string]any{"text": text}); err != nil {
					t.Fatal(err)
				}
			}
			keyed := c
			keyed.Keys.Primary = testkeys.Key
			if mode == "migration" {
				h, err := Open(ctx, c)
				if err != nil {
					t.Fatal(err)
				}
				put(h, "old", "plain before encryption")
				h.Close()
				keyed.DangerousAllowPlaintext = true
			}
			h, err := Open(ctx, keyed)
			if err != nil {
				t.Fatal(err)
			}
			put(h, "carol", "carol takes insulin (encrypted)")
			h.Close()
			db, err := sql.Open("sqlite", c.DBPath)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if mode == "injected" {
				for _, q := range []string{
					`INSERT INTO checkpoint_blobs (rowid, thread_id, checkpoint_ns, channel, version, type, blob) VALUES (-1, 'x', '', 'c', '1', 'json', '1')`,
					`INSERT INTO checkpoint_writes (rowid, thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob) VALUES (-1, 'x', '', 'i', 't', 0, 'c', 'json', '1')`,
					`INSERT INTO store (rowid, prefix, key, value, created_at, updated_at) VALUES (-1, 'x', 'k', '{}', 0, 0)`,
				} {
					if _, err := db.Exec(q); err != nil {
						t.Fatal(err)
					}
				}
			}

			h, err = Open(ctx, c) // no key
			if err != nil {
				if errors.Is(err, ErrKeyNotLoaded) {
					return // refused: the promise holds
				}
				t.Fatal(err)
			}
			defer h.Close()
			put(h, "dave", "dave's new secret")
			var raw string
			if err := db.QueryRow(`SELECT CAST(blob AS TEXT) FROM checkpoint_blobs WHERE thread_id = 'dave'`).Scan(&raw); err != nil {
				t.Fatal(err)
			}
			t.Fatalf("a database holding encrypted values (carol's), its first rows plaintext, opened without a key (Open = nil) "+
				"and the keyless process stored a new secret in the clear: checkpoint_blobs holds %q (plaintext: %v)",
				raw, strings.Contains(raw, "dave's new secret"))
		})
	}
}
