package mongovault_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/backends/mongodb/mongotest"
	_ "github.com/memvault/memvault/backends/mongodb/mongovault"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/vault"
)

// openEnv opens vault.Open on the configuration env describes.
// subjectEnv is the environment of the test server's database db with
// encryption under a fixed key, per-subject keys by thread id (":"), no
// embeddings, and the settings of extra (name, value pairs).
func subjectEnv(t *testing.T, db string, extra ...string) map[string]string {
	t.Helper()
	env := map[string]string{
		"MEMVAULT_DSN":                      mongotest.URI(t),
		"MEMVAULT_SCHEMA":                   db,
		"MEMVAULT_EMBEDDINGS":               "none",
		"LANGGRAPH_AES_KEY":                 "0123456789abcdef0123456789abcdef",
		"MEMVAULT_SUBJECT_THREAD_SEPARATOR": ":",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		env[extra[i]] = extra[i+1]
	}
	return env
}

func openEnv(t *testing.T, env map[string]string) (*vault.Handle, error) {
	t.Helper()
	c, err := config.FromLookup(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	return vault.Open(t.Context(), c)
}

// TestSubjectKeysThroughConfig: per-subject keys configured through the
// environment on a mongodb:// DSN, the key table in a SQLite file apart
// (MEMVAULT_KEY_TABLE): vault.Open opens them (before: refused with
// vault.ErrUnsupported), checkpoints and memories are sealed under each
// subject's key, and Forget erases one subject's threads and memories and
// leaves the other's readable. Without a key table named, Open refuses,
// naming the two settings.
func TestSubjectKeysThroughConfig(t *testing.T) {
	ctx := t.Context()
	env := subjectEnv(t, mongotest.Database(t).Name(), "MEMVAULT_SUBJECT_NAMESPACE", "users")
	if _, err := openEnv(t, env); !errors.Is(err, vault.ErrUnsupported) || !strings.Contains(err.Error(), "MEMVAULT_KEY_DSN") {
		t.Fatalf("Open with per-subject keys and no key table: %v; want ErrUnsupported naming MEMVAULT_KEY_DSN", err)
	}
	env["MEMVAULT_KEY_TABLE"] = filepath.Join(t.TempDir(), "keys.db")
	h, err := openEnv(t, env)
	if err != nil {
		t.Fatalf("Open with per-subject keys on MongoDB: %v", err)
	}
	defer h.Close()
	if h.Keys == nil {
		t.Fatal("Open with per-subject keys: no key hierarchy")
	}
	for _, subject := range []string{"ann", "bob"} {
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
			ChannelValues: map[string]any{"notes": subject + " is allergic to peanuts"}, ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
		if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: subject + ":1"}, cp, checkpointer.Metadata{}, cp.ChannelVersions); err != nil {
			t.Fatal(err)
		}
		if err := h.Store.Put(ctx, store.Namespace{"users", subject}, "diet", map[string]any{"text": "no peanuts"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.Forget(ctx, "ann"); err != nil {
		t.Fatalf("Forget: %v", err)
	}
	if tu, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "ann:1"}); err != nil || tu != nil {
		t.Fatalf("ann's thread after Forget: %v, %v; want none", tu, err)
	}
	if it, err := h.Store.Get(ctx, store.Namespace{"users", "ann"}, "diet"); err != nil || it != nil {
		t.Fatalf("ann's memory after Forget: %v, %v; want none", it, err)
	}
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(1), TS: time.Now(),
		ChannelValues: map[string]any{"notes": "again"}, ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
	if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: "ann:2"}, cp, checkpointer.Metadata{}, cp.ChannelVersions); !errors.Is(err, keys.ErrSubjectErased) {
		t.Fatalf("put of the erased subject: %v; want keys.ErrSubjectErased", err)
	}
	tu, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "bob:1"})
	if err != nil || tu == nil || tu.Checkpoint.ChannelValues["notes"] != "bob is allergic to peanuts" {
		t.Fatalf("bob's thread after ann's erasure: %v, %v", tu, err)
	}
	if it, err := h.Store.Get(ctx, store.Namespace{"users", "bob"}, "diet"); err != nil || it == nil {
		t.Fatalf("bob's memory after ann's erasure: %v, %v", it, err)
	}
	_ = h.Close()
	// A process without the subject's key table opens nothing sealed
	// under it: the key check refuses.
	env["MEMVAULT_KEY_TABLE"] = filepath.Join(t.TempDir(), "other-keys.db")
	if h2, err := openEnv(t, env); err == nil {
		_ = h2.Close()
		t.Fatal("Open with an empty key table over data sealed under subjects' keys succeeded")
	}
}

// TestSubjectsRequiredOnMongoDB: a database opened once with per-subject
// keys refuses a process without them (vault.ErrSubjectsRequired) — a
// cron job or a shell where MEMVAULT_SUBJECT_* was not exported would seal
// an erased subject's values under the master key, beyond the erasure.
// Before, MongoDB's meta kept no marks, so such a process opened and wrote
// "carol, after her erasure" readable under the master key.
func TestSubjectsRequiredOnMongoDB(t *testing.T) {
	env := subjectEnv(t, mongotest.Database(t).Name(), "MEMVAULT_KEY_TABLE", filepath.Join(t.TempDir(), "keys.db"))
	h, err := openEnv(t, env)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Forget(t.Context(), "carol"); err != nil {
		t.Fatal(err)
	}
	h.Close()
	// A second open with them finds its own mark and opens.
	if h, err = openEnv(t, env); err != nil {
		t.Fatalf("reopen with per-subject keys: %v", err)
	}
	h.Close()

	stale := map[string]string{}
	for k, v := range env {
		if !strings.HasPrefix(k, "MEMVAULT_SUBJECT_") {
			stale[k] = v
		}
	}
	if h, err := openEnv(t, stale); !errors.Is(err, vault.ErrSubjectsRequired) {
		if err == nil {
			h.Close()
		}
		t.Fatalf("Open without per-subject keys on a database that has them: %v; want vault.ErrSubjectsRequired", err)
	}
}
