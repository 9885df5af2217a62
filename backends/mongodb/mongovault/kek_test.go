package mongovault_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/vault"
)

// TestWrongMasterKeyWithSubjectsOnMongoDB: with per-subject keys a
// subject's values are under the subject's data key, which no master key
// has. On MongoDB the value check opens a stored value, so a wrong
// LANGGRAPH_AES_KEY was refused only by the bare unwrap error of the
// hierarchy (`keys: key 1 of "carol" is wrapped by "env:…", which no
// configured provider holds`), not vault.ErrKeyNotLoaded and without what
// to set. vault.Open now reads the key table's KEK ids first (MongoDB's
// key table is a SQLite or PostgreSQL one) and refuses with
// ErrKeyNotLoaded, naming the KEK.
func TestWrongMasterKeyWithSubjectsOnMongoDB(t *testing.T) {
	ctx := t.Context()
	env := subjectEnv(t, mongotest.Database(t).Name(), "MEMVAULT_KEY_TABLE", filepath.Join(t.TempDir(), "keys.db"))
	h, err := openEnv(t, env)
	if err != nil {
		t.Fatal(err)
	}
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
		ChannelValues: map[string]any{"notes": "carol takes insulin"}, ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
	if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: "carol:1"}, cp, checkpointer.Metadata{}, cp.ChannelVersions); err != nil {
		t.Fatal(err)
	}
	_ = h.Close()
	env["LANGGRAPH_AES_KEY"] = "fedcba9876543210fedcba9876543210"
	if h, err := openEnv(t, env); err == nil {
		_ = h.Close()
		t.Fatal("Open with a wrong master key and per-subject keys on MongoDB: opened; want vault.ErrKeyNotLoaded")
	} else if !errors.Is(err, vault.ErrKeyNotLoaded) || !strings.Contains(err.Error(), "env:") || strings.Contains(err.Error(), env["LANGGRAPH_AES_KEY"]) {
		t.Fatalf("Open with a wrong master key on MongoDB: %v; want vault.ErrKeyNotLoaded naming the KEK id, no key", err)
	}
}
