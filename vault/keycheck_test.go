package vault

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/reencrypt"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
)

// writeSecrets opens c, stores secretWords as a memory and a checkpoint
// value (putSecrets), and closes.
func writeSecrets(t *testing.T, c config.Config) {
	t.Helper()
	h, err := Open(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	putSecrets(t, h)
}

// otherKey is a key that sealed nothing in these tests.
const otherKey = "fedcba9876543210fedcba9876543210"

func keyID(t *testing.T, key string) string {
	t.Helper()
	c := config.Default()
	c.Keys.Primary = key
	ring, err := c.Keyring()
	if err != nil {
		t.Fatal(err)
	}
	return ring.Primary().ID().String()
}

// TestWrongOrMissingKeyIsNamed is issue 30's second finding: opening a
// database with a wrong key, or none, blamed the embedder ("stored vectors
// were made by another embedder … re-embed the items") or, with
// embeddings off, opened and then failed each read with "decryption
// failed" / "unknown type tag json+mvgcm" — and a keyless process would
// have written plaintext beside the sealed values. Now Open refuses with
// ErrKeyNotLoaded, naming the key the data is under and the loaded ones
// (ids only), on both SQL backends, with and without embeddings; the
// right key, or the old key as a previous one, still opens.
func TestWrongOrMissingKeyIsNamed(t *testing.T) {
	ctx := context.Background()
	written, other := keyID(t, testkeys.Key), keyID(t, otherKey)
	dsn := pgtest.SchemaDSN(t)
	for _, backend := range []string{"sqlite", "postgres"} {
		for _, emb := range []string{config.DefaultEmbeddings, "none"} {
			t.Run(backend+"/"+emb, func(t *testing.T) {
				c := config.Default()
				c.Embeddings = emb
				if backend == "sqlite" {
					c.DBPath = filepath.Join(t.TempDir(), "agent.db")
				} else {
					c.DSN, c.Schema = dsn, fmt.Sprintf("keys_%s_%d", strings.ReplaceAll(emb, ":", ""), time.Now().UnixNano())
				}
				c.Keys.Primary = testkeys.Key
				writeSecrets(t, c)

				for _, tc := range []struct {
					name string
					keys config.Keys
					want []string
				}{
					{"wrong key", config.Keys{Primary: otherKey}, []string{written, "the loaded keys are " + other}},
					{"no key", config.Keys{}, []string{written, "no key is loaded"}},
				} {
					c := c
					c.Keys = tc.keys
					h, err := Open(ctx, c)
					if err == nil {
						h.Close()
						t.Fatalf("%s: opened", tc.name)
					}
					if !errors.Is(err, ErrKeyNotLoaded) {
						t.Fatalf("%s: %v, want ErrKeyNotLoaded", tc.name, err)
					}
					msg := err.Error()
					for _, w := range tc.want {
						if !strings.Contains(msg, w) {
							t.Errorf("%s: %q does not say %q", tc.name, msg, w)
						}
					}
					if strings.Contains(msg, "re-embed") || strings.Contains(msg, testkeys.Key) || strings.Contains(msg, otherKey) {
						t.Errorf("%s: %q blames the embedder or shows a key", tc.name, msg)
					}
				}

				// A lost key: the check can be skipped, to delete what it
				// sealed (reads of it fail, as they must).
				skip := c
				skip.Keys, skip.DangerousSkipKeyCheck, skip.Embeddings = config.Keys{Primary: otherKey}, true, "none"
				if h, err := Open(ctx, skip); err != nil {
					t.Fatalf("DangerousSkipKeyCheck: %v", err)
				} else {
					_, err := h.Store.Get(ctx, store.Namespace{"users", "alice"}, "contact")
					h.Close()
					if !errors.Is(err, serde.ErrDecrypt) {
						t.Fatalf("a value under a key not loaded: %v, want ErrDecrypt", err)
					}
				}

				// The old key as a previous one opens, and reads.
				c.Keys = config.Keys{Primary: otherKey, Previous: []string{testkeys.Key}}
				h, err := Open(ctx, c)
				if err != nil {
					t.Fatalf("with the old key as previous: %v", err)
				}
				defer h.Close()
				if it, err := h.Store.Get(ctx, store.Namespace{"users", "alice"}, "contact"); err != nil || it == nil || it.Value["text"] != secretWords {
					t.Fatalf("read with the old key as previous: %v, %v", it, err)
				}
			})
		}
	}
}

// TestPlaintextDatabaseOpensWithAKey: a plaintext database opens under a
// key in the migration mode (DangerousAllowPlaintext: read as it is,
// encrypted from then on, `keys reencrypt` seals the rest). Until session
// 22 it opened without it too, and was then half unreadable (see
// TestPlaintextDatabaseWithKeyRefused).
func TestPlaintextDatabaseOpensWithAKey(t *testing.T) {
	ctx := context.Background()
	c := config.Default()
	c.DBPath = filepath.Join(t.TempDir(), "agent.db")
	c.Embeddings = "none"
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Store.Put(ctx, store.Namespace{"a"}, "k", map[string]any{"v": 1}); err != nil {
		t.Fatal(err)
	}
	h.Close()
	c.Keys.Primary = testkeys.Key
	c.DangerousAllowPlaintext = true
	h, err = Open(ctx, c)
	if err != nil {
		t.Fatalf("a plaintext database under a key, plaintext allowed: %v", err)
	}
	h.Close()
}

// TestReencryptStepsReportsEachStep: the CLI's progress comes from
// ReencryptSteps — each step named as it begins, in order, its progress
// function called — and the report counts what each step did.
func TestReencryptStepsReportsEachStep(t *testing.T) {
	ctx := context.Background()
	c := config.Default()
	c.DBPath = filepath.Join(t.TempDir(), "agent.db")
	c.Keys.Primary = testkeys.Key
	writeSecrets(t, c)
	c.Keys = config.Keys{Primary: otherKey, Previous: []string{testkeys.Key}}
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var steps []string
	calls := map[string]int{}
	rep, err := h.ReencryptSteps(ctx, reencrypt.Options{}, func(step string) func(done, total int64) {
		steps = append(steps, step)
		return func(done, total int64) { calls[step]++ }
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{StepCheckpoints, StepMemories, StepReembed}; strings.Join(steps, "|") != strings.Join(want, "|") {
		t.Fatalf("steps %q, want %q", steps, want)
	}
	for _, s := range steps {
		if calls[s] == 0 {
			t.Errorf("step %q reported no progress", s)
		}
	}
	if rep.Saver.Rewritten != 1 || rep.Store.Rewritten != 1 || rep.Reembedded != 1 {
		t.Fatalf("report %+v", rep)
	}
}
