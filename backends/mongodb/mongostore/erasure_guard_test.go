package mongostore_test

import (
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/memvault/memvault/backends/mongodb/mongostore"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	_ "github.com/memvault/memvault/backends/mongodb/mongovault" // registers mongodb://
	"github.com/memvault/memvault/config"
	mvkeys "github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/vault"
)

// TestLateWriteOnCopiedKeyTable: the erasure guard on MongoDB, which has
// no transaction to run it in. A process on a copy of the key table taken
// before Forget(carol) — which still holds carol's keys — puts an item of
// (users, carol); the write stops at a point (test hook) while
// Forget(carol) runs to completion in another process, then goes on. Its
// writer lease is deleted meanwhile, as it expires while a process is
// stopped longer than its TTL: Forget's drain then no longer waits for
// the write.
//
//   - "write": the write checked the guard before Forget recorded its
//     erasure, and stops at Commit just before it writes (its lease
//     confirmed). Before the write checked the guard again after writing,
//     carol's item, sealed under a key the copied table still holds,
//     outlived the erasure.
//   - "written": the write stored the item and stops before it checks the
//     guard again; Forget's deletion comes after and removes it.
//
// Either way the item is gone, and the late write fails with
// keys.ErrSubjectErased.
func TestLateWriteOnCopiedKeyTable(t *testing.T) {
	for _, at := range []string{"write", "written"} {
		t.Run(at, func(t *testing.T) { lateWriteOnCopy(t, at) })
	}
}

func lateWriteOnCopy(t *testing.T, at string) {
	ctx := t.Context()
	db := mongotest.Database(t)
	dir := t.TempDir()
	env := map[string]string{
		"MEMVAULT_DSN":               mongotest.URI(t),
		"MEMVAULT_SCHEMA":            db.Name(),
		"MEMVAULT_EMBEDDINGS":        "none",
		"LANGGRAPH_AES_KEY":          "0123456789abcdef0123456789abcdef",
		"MEMVAULT_SUBJECT_NAMESPACE": "users",
		"MEMVAULT_KEY_TABLE":         filepath.Join(dir, "keys.db"),
	}
	h := openVault(t, env)
	if err := h.Keys.RotateSubject(ctx, "carol"); err != nil { // carol has a key
		t.Fatal(err)
	}
	h.Close()
	b, err := os.ReadFile(env["MEMVAULT_KEY_TABLE"])
	if err != nil {
		t.Fatal(err)
	}
	onCopy := map[string]string{}
	for k, v := range env {
		onCopy[k] = v
	}
	onCopy["MEMVAULT_KEY_TABLE"] = filepath.Join(dir, "copied-keys.db")
	if err := os.WriteFile(onCopy["MEMVAULT_KEY_TABLE"], b, 0o600); err != nil {
		t.Fatal(err)
	}
	stale := openVault(t, onCopy)
	defer stale.Close()
	st := storeOf(t, stale.Store)

	paused, resume := make(chan struct{}, 1), make(chan struct{})
	var armed atomic.Bool
	armed.Store(true)
	stop := func() {
		if armed.Load() {
			paused <- struct{}{}
			<-resume
		}
	}
	if at == "write" {
		mongostore.SetBeforeWrite(st, stop)
	} else {
		mongostore.SetAfterWrite(st, stop)
	}
	done := make(chan error, 1)
	go func() {
		done <- stale.Store.Put(ctx, store.Namespace{"users", "carol"}, "k2", map[string]any{"v": "no peanuts"})
	}()
	<-paused
	// The writer stopped longer than its lease's TTL: it expires.
	if _, err := db.Collection("persistent-store.lease").DeleteMany(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	live := openVault(t, env)
	if _, err := live.Forget(ctx, "carol"); err != nil {
		t.Fatalf("forget carol: %v", err)
	}
	live.Close()
	armed.Store(false)
	close(resume)
	if err := <-done; !errors.Is(err, mvkeys.ErrSubjectErased) {
		t.Errorf("a put of carol's item on a copy of the key table, stopped at %q across Forget(carol): %v, want keys.ErrSubjectErased", at, err)
	}
	n, err := db.Collection("persistent-store").CountDocuments(ctx, bson.D{{Key: "namespace_str", Value: "users/carol"}})
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d items of (users, carol) after Forget(carol) returned and the write stopped at %q went on: "+
			"carol's value, sealed under a key the copied table holds, outlives her erasure", n, at)
	}
}

// openVault opens a vault.Handle with the settings of env.
func openVault(t *testing.T, env map[string]string) *vault.Handle {
	t.Helper()
	c, err := config.FromLookup(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	h, err := vault.Open(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// storeOf returns the mongostore.Store s wraps.
func storeOf(t *testing.T, s store.Store) *mongostore.Store {
	t.Helper()
	for {
		switch v := s.(type) {
		case *mongostore.Store:
			return v
		case interface{ Unwrap() store.Store }:
			s = v.Unwrap()
		default:
			t.Fatalf("no mongostore.Store in %T", s)
		}
	}
}
