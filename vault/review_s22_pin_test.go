package vault

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/memvaulttest/testkeys"
)

// copyFileS22 copies a closed SQLite file byte for byte.
func copyFileS22(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// putCarolS22 stores thread id under h and reads it back.
func putCarolS22(ctx context.Context, h *Handle, thread, notes string) (string, error) {
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": notes},
		ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
	if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, nil, cp.ChannelVersions); err != nil {
		return "", err
	}
	tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: thread})
	if err != nil || tup == nil {
		return "", err
	}
	s, _ := tup.Checkpoint.ChannelValues["notes"].(string)
	return s, nil
}

// TestReviewS22CopiedKeyTableAccepted (session 22 review): the key table
// pin (subject_key_table) holds the id the table made once, and a copy of
// the key file carries that id. The operator who "moves" the key file
// apart from the data as README advises (cp agent.db.keys
// /secure/keys.db, MEMVAULT_KEY_TABLE=/secure/keys.db) and leaves one job
// on the default path has two tables under one id: forget carol runs on
// one, and the job on the other is accepted by Open, writes carol:2 under
// carol's destroyed key after Forget(carol) returned, and reads it back.
// README (Erasure, step 2): "Every write of S's values, by any process,
// fails with keys.ErrSubjectsErased"; the pin's purpose: "another key
// table — a new, empty one that knows nothing of S's erasure — is
// refused".
func TestReviewS22CopiedKeyTableAccepted(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c := config.Default()
	c.DBPath = filepath.Join(dir, "agent.db")
	c.Keys.Primary = testkeys.Key
	c.Embeddings = "none"
	c.Subjects.ThreadSeparator = ":"
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := putCarolS22(ctx, h, "carol:1", "carol takes insulin"); err != nil {
		t.Fatal(err)
	}
	h.Close()
	// The key file is "moved" by a copy; the old one stays.
	var defaultKeys string
	for _, name := range []string{c.DBPath + ".keys", filepath.Join(dir, "agent.keys")} {
		if _, err := os.Stat(name); err == nil {
			defaultKeys = name
		}
	}
	if defaultKeys == "" {
		entries, _ := os.ReadDir(dir)
		t.Fatalf("no default key file in %v", entries)
	}
	moved := c
	moved.KeyTable = filepath.Join(dir, "secure-keys.db")
	copyFileS22(t, defaultKeys, moved.KeyTable)

	h, err = Open(ctx, moved)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Forget(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	h.Close()

	// The forgotten job, on the default key file.
	stale, err := Open(ctx, c)
	if err != nil {
		if errors.Is(err, ErrSubjectsChanged) {
			return // refused: the promise holds
		}
		t.Fatal(err)
	}
	defer stale.Close()
	got, err := putCarolS22(ctx, stale, "carol:2", "carol takes insulin (after erasure)")
	if err == nil {
		t.Fatalf("a process on a copy of the key table made before Forget(carol) was opened, wrote carol:2 after the erasure and reads it back: %q", got)
	}
}
