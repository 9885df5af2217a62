package mongovault_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/vault"
)

// TestKeyTableBackupRefusedOnMongoDB: on MongoDB the data database keeps
// the key table's erasure count as a document of memvault_meta
// (AdvanceMark's $max), and a backup of the key table taken before
// Forget(carol), restored after it, is refused (vault.ErrSubjectsChanged)
// — as TestKeyTableBackupRefused shows for SQLite and PostgreSQL — while
// the table the erasure ran on opens.
func TestKeyTableBackupRefusedOnMongoDB(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "keys.db")
	env := subjectEnv(t, mongotest.Database(t).Name(), "MEMVAULT_KEY_TABLE", keyFile)
	h, err := openEnv(t, env)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Keys.RotateSubject(t.Context(), "carol"); err != nil { // carol has a key
		t.Fatal(err)
	}
	h.Close()
	backup, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if h, err = openEnv(t, env); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Forget(t.Context(), "carol"); err != nil {
		t.Fatal(err)
	}
	h.Close()
	if h, err = openEnv(t, env); err != nil {
		t.Fatalf("reopen with the key table the erasure ran on: %v", err)
	}
	h.Close()

	erased, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		_ = os.Remove(keyFile + suffix)
	}
	if err := os.WriteFile(keyFile, backup, 0o600); err != nil {
		t.Fatal(err)
	}
	h, err = openEnv(t, env)
	if err == nil {
		h.Close()
	}
	if !errors.Is(err, vault.ErrSubjectsChanged) {
		t.Fatalf("Open with the key table's backup from before Forget(carol) = %v, want vault.ErrSubjectsChanged", err)
	}
	if err := os.WriteFile(keyFile, erased, 0o600); err != nil {
		t.Fatal(err)
	}
	if h, err = openEnv(t, env); err != nil {
		t.Fatalf("reopen with the erased key table put back: %v", err)
	}
	h.Close()
}
