package mongovault_test

import (
	"errors"
	"maps"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/vault"
)

// TestReviewS22PinsOnMongoDB (session 22 review; held): the subject
// mapping and key table pins (subject_mapping, subject_key_table) hold on
// MongoDB too, where they are documents of memvault_meta — only
// TestSubjectMappingPinned and TestKeyTablePinned (SQLite, PostgreSQL)
// tested them: a process with another thread separator, without
// MEMVAULT_SUBJECT_NAMESPACE, or with another (new) key table is refused
// with vault.ErrSubjectsChanged after an erasure; the same configuration
// opens.
func TestReviewS22PinsOnMongoDB(t *testing.T) {
	env := subjectEnv(t, mongotest.Database(t).Name(), "MEMVAULT_SUBJECT_NAMESPACE", "users", "MEMVAULT_KEY_TABLE", filepath.Join(t.TempDir(), "keys.db"))
	h, err := openEnv(t, env)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Forget(t.Context(), "carol"); err != nil {
		t.Fatal(err)
	}
	h.Close()
	for name, edit := range map[string]func(map[string]string){
		"another thread separator": func(e map[string]string) { e["MEMVAULT_SUBJECT_THREAD_SEPARATOR"] = "/" },
		"namespace prefix not set": func(e map[string]string) { delete(e, "MEMVAULT_SUBJECT_NAMESPACE") },
		"a new key table":          func(e map[string]string) { e["MEMVAULT_KEY_TABLE"] = filepath.Join(t.TempDir(), "keys.db") },
		"thread metadata instead of :": func(e map[string]string) {
			delete(e, "MEMVAULT_SUBJECT_THREAD_SEPARATOR")
			e["MEMVAULT_SUBJECT_THREAD_METADATA"] = "user_id"
		},
	} {
		other := maps.Clone(env)
		edit(other)
		h, err := openEnv(t, other)
		if err == nil {
			h.Close()
		}
		if !errors.Is(err, vault.ErrSubjectsChanged) {
			t.Errorf("%s: Open = %v, want vault.ErrSubjectsChanged", name, err)
		}
	}
	if h, err = openEnv(t, env); err != nil {
		t.Fatalf("reopen with the database's configuration: %v", err)
	}
	h.Close()
}
