package vault

import (
	"context"
	"database/sql"
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

// TestReviewS22UnpinnedDatabaseTakesEmptyKeyTable (session 22 review): a
// database marked subject_keys whose key table is not pinned — a backup
// restored from before the pins (session 21), or the two rows deleted by
// whoever can write memvault_meta — is pinned by its next open to
// whatever key table that process has (TestSubjectMarksOfAnOlderDatabase
// shows the re-pinning). A process whose MEMVAULT_KEY_TABLE names a new,
// empty file is then accepted, makes erased carol a key again and writes
// carol:2, which reads back after Forget(carol) — the very mistake the pin
// exists to refuse ("a mistyped MEMVAULT_KEY_TABLE"), and the rightful
// processes are the ones refused from then on. A database that has used
// per-subject keys cannot rightly meet an empty key table.
func TestReviewS22UnpinnedDatabaseTakesEmptyKeyTable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c := config.Default()
	c.DBPath = filepath.Join(dir, "agent.db")
	c.Keys.Primary = testkeys.Key
	c.Embeddings = "none"
	c.Subjects.ThreadSeparator = ":"
	c.Subjects.NamespacePrefix = []string{"users"}
	erasedCarol(t, c)
	db, err := sql.Open("sqlite", c.DBPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM memvault_meta WHERE name IN ('subject_mapping', 'subject_key_table')`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	typo := c
	typo.KeyTable = filepath.Join(dir, "agent-keys.db") // a new, empty key table
	h, err := Open(ctx, typo)
	if err != nil {
		if errors.Is(err, ErrSubjectsChanged) {
			return // refused: the promise holds
		}
		t.Fatal(err)
	}
	defer h.Close()
	got, err := putCarolS22(ctx, h, "carol:2", "carol takes insulin (after erasure)")
	if err == nil {
		t.Fatalf("a database marked subject_keys without its key table pin opened with a new, empty key table, wrote erased carol's carol:2 and reads it back: %q", got)
	}
}
