package mongovault_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/vault"
)

// TestRunningProcessOnCopiedKeyTableOnMongoDB: vault's
// TestRunningProcessOnCopiedKeyTable on MongoDB. A process already running
// on a copy of the key file when another process forgets carol checks,
// before each write of carol, the erasure the data database records
// (the mark erased_subject:carol) against its key table's count of
// erasures, and is refused; a process on the live table is not, once
// carol is readmitted. On main the process on the copy wrote carol's
// checkpoint and item after Forget(carol) returned.
func TestRunningProcessOnCopiedKeyTableOnMongoDB(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "keys.db")
	env := subjectEnv(t, mongotest.Database(t).Name(), "MEMVAULT_SUBJECT_NAMESPACE", "users", "MEMVAULT_KEY_TABLE", keyFile)
	h, err := openEnv(t, env)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Keys.RotateSubject(t.Context(), "carol"); err != nil { // carol has a key
		t.Fatal(err)
	}
	h.Close()
	copied := filepath.Join(dir, "copied-keys.db")
	b, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copied, b, 0o600); err != nil {
		t.Fatal(err)
	}
	onCopy := map[string]string{}
	for k, v := range env {
		onCopy[k] = v
	}
	onCopy["MEMVAULT_KEY_TABLE"] = copied
	stale, err := openEnv(t, onCopy)
	if err != nil {
		t.Fatal(err)
	}
	defer stale.Close()
	other, err := openEnv(t, env)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	if h, err = openEnv(t, env); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Forget(t.Context(), "carol"); err != nil {
		t.Fatal(err)
	}
	h.Close()

	for op, err := range carolWritesMongo(t, stale, "2") {
		if !errors.Is(err, keys.ErrSubjectErased) {
			t.Errorf("a process running on a copy of the key table, %s of carol after Forget(carol) returned: %v, want keys.ErrSubjectErased", op, err)
		}
	}
	if err := other.Readmit(t.Context(), "carol"); err != nil {
		t.Fatal(err)
	}
	for op, err := range carolWritesMongo(t, other, "3") {
		if err != nil {
			t.Errorf("a process on the live table opened before the erasure, %s of carol once readmitted: %v", op, err)
		}
	}
}

// carolWritesMongo puts a checkpoint of thread carol:<n> and an item of
// (users, carol), and returns each write's error.
func carolWritesMongo(t *testing.T, h *vault.Handle, n string) map[string]error {
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": "carol takes insulin"},
		ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
	_, put := h.Saver.Put(t.Context(), checkpointer.Config{ThreadID: "carol:" + n}, cp, nil, cp.ChannelVersions)
	item := h.Store.Put(t.Context(), store.Namespace{"users", "carol"}, "k"+n, map[string]any{"v": "no peanuts"})
	return map[string]error{"put": put, "store put": item}
}
