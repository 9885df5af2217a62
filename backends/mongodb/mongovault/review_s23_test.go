package mongovault_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/vault"
)

// TestReviewS23ErasureMarkHostileType (session 23 review, held): the
// erasure count on MongoDB is a memvault_meta document moved up by $max.
// $max compares across BSON types (numbers < strings < objects < … <
// booleans), so a count replaced by a string, an object or a fraction by
// whoever can write the data database is never moved up again. Such a
// count is not read as 0 — which would let a key table backup from
// before Forget(carol) in for good: MarkCount's decode fails and Open
// refuses (a denial of service only, open to anyone who can write
// memvault_meta anyway). Guards a later "tolerant" decode. A boolean is
// the exception (TestReviewS23ErasureMarkFrozenByBoolean).
func TestReviewS23ErasureMarkHostileType(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "keys.db")
	db := mongotest.Database(t)
	env := subjectEnv(t, db.Name(), "MEMVAULT_KEY_TABLE", keyFile)
	h, err := openEnv(t, env)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Keys.RotateSubject(t.Context(), "carol"); err != nil {
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
	for _, suffix := range []string{"-wal", "-shm"} {
		_ = os.Remove(keyFile + suffix)
	}
	if err := os.WriteFile(keyFile, backup, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, hostile := range []any{"0", bson.D{{Key: "n", Value: 0}}, 1.5} {
		if _, err := db.Collection("memvault_meta").UpdateOne(t.Context(), bson.D{{Key: "_id", Value: "mark:subject_key_erasures"}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "count", Value: hostile}}}}); err != nil {
			t.Fatal(err)
		}
		h, err := openEnv(t, env)
		if err == nil {
			h.Close()
			t.Fatalf("count %#v: Open with the key table's backup from before Forget(carol) succeeded", hostile)
		}
		t.Logf("count %#v: %v", hostile, err)
	}
}

// TestReviewS23ErasureMarkFrozenByBoolean (session 23 review): the Go
// driver decodes a BSON boolean into an int64 (false 0, true 1), and
// booleans sort above every number, so $max never moves such a count
// again. One write of {count: false} to memvault_meta — by anyone who
// can write the data database — turns the erasure count off for good:
// it reads 0 whatever the key table counts, every AdvanceMark ($max) is a
// no-op, and a key table backup from before Forget(carol), restored
// later, is accepted: carol has a key again and carol:2 reads back. On
// SQLite and PostgreSQL a count that is not a number fails the open.
func TestReviewS23ErasureMarkFrozenByBoolean(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "keys.db")
	db := mongotest.Database(t)
	env := subjectEnv(t, db.Name(), "MEMVAULT_KEY_TABLE", keyFile)
	h, err := openEnv(t, env)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Keys.RotateSubject(t.Context(), "carol"); err != nil {
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
	if _, err := db.Collection("memvault_meta").UpdateOne(t.Context(), bson.D{{Key: "_id", Value: "mark:subject_key_erasures"}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "count", Value: false}}}}); err != nil {
		t.Fatal(err)
	}
	// Rightful processes open and forget again: the count stays false.
	// (Or the open refuses the count that is no integer, as SQLite and
	// PostgreSQL refuse one: fail closed, the promise holds.)
	if h, err = openEnv(t, env); err != nil {
		if strings.Contains(err.Error(), "not an integer count") {
			return
		}
		t.Fatal(err)
	}
	if _, err := h.Forget(t.Context(), "dave"); err != nil {
		t.Fatal(err)
	}
	h.Close()
	var doc bson.M
	if err := db.Collection("memvault_meta").FindOne(t.Context(), bson.D{{Key: "_id", Value: "mark:subject_key_erasures"}}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	t.Logf("the mark after two rightful opens and Forget(dave): count %#v", doc["count"])

	for _, suffix := range []string{"-wal", "-shm"} {
		_ = os.Remove(keyFile + suffix)
	}
	if err := os.WriteFile(keyFile, backup, 0o600); err != nil {
		t.Fatal(err)
	}
	h, err = openEnv(t, env)
	if err != nil {
		return // refused: the promise holds
	}
	defer h.Close()
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": "carol takes insulin (after erasure)"},
		ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
	if _, err := h.Saver.Put(t.Context(), checkpointer.Config{ThreadID: "carol:2"}, cp, nil, cp.ChannelVersions); err != nil {
		t.Fatalf("Open accepted the key table backup from before Forget(carol) (count frozen at %#v); the put was refused: %v", doc["count"], err)
	}
	tup, err := h.Saver.GetTuple(t.Context(), checkpointer.Config{ThreadID: "carol:2"})
	if err != nil || tup == nil {
		t.Fatalf("Open accepted the key table backup (count frozen at %#v); read back: %v, %v", doc["count"], tup, err)
	}
	t.Fatalf("memvault_meta's erasure count set to false once: the key table backup from before Forget(carol) is accepted after two "+
		"more opens and Forget(dave) (count still %#v), and carol:2 reads back: %q; want vault.ErrSubjectsChanged", doc["count"], tup.Checkpoint.ChannelValues["notes"])
}

// TestReviewS23MixedDatabaseOpenedWithoutKey (session 23 review): on
// MongoDB Open's key check (vault's checkExternalKeys) decodes the latest
// checkpoint of the first thread listed — the thread with the newest
// checkpoint — and one memory of the first namespace. A rolling deploy
// that turns encryption on in the documented migration mode (new
// processes: key + MEMVAULT_ALLOW_PLAINTEXT; old ones still running
// without a key) holds sealed values of new threads and plaintext values
// of the old processes' threads. When the newest checkpoint is an old
// process's, a process starting without LANGGRAPH_AES_KEY is accepted
// and writes a new secret in the clear beside carol's sealed values —
// what ErrKeyNotLoaded exists to stop ("sealed while no key is loaded").
// (With the newest checkpoint a sealed one it is refused.) vault's
// TestReviewS23MixedDatabaseOpenedWithoutKey shows the same on SQLite.
func TestReviewS23MixedDatabaseOpenedWithoutKey(t *testing.T) {
	db := mongotest.Database(t)
	env := map[string]string{"MEMVAULT_DSN": mongotest.URI(t), "MEMVAULT_SCHEMA": db.Name(), "MEMVAULT_EMBEDDINGS": "none"}
	put := func(h *vault.Handle, thread, text string) {
		t.Helper()
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": text},
			ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
		if _, err := h.Saver.Put(t.Context(), checkpointer.Config{ThreadID: thread}, cp, checkpointer.Metadata{}, cp.ChannelVersions); err != nil {
			t.Fatal(err)
		}
		if err := h.Store.Put(t.Context(), store.Namespace{thread}, "k", map[string]any{"text": text}); err != nil {
			t.Fatal(err)
		}
	}
	old, err := openEnv(t, env) // an old process, no key, still running
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	put(old, "a-old", "plain before encryption")
	keyed := map[string]string{"LANGGRAPH_AES_KEY": "0123456789abcdef0123456789abcdef", "MEMVAULT_ALLOW_PLAINTEXT": "true"}
	for k, v := range env {
		keyed[k] = v
	}
	h, err := openEnv(t, keyed) // a new one
	if err != nil {
		t.Fatal(err)
	}
	put(h, "carol", "carol takes insulin (encrypted)")
	h.Close()
	put(old, "b-old", "the old process writes on")

	h, err = openEnv(t, env) // no key
	if err != nil {
		if errors.Is(err, vault.ErrKeyNotLoaded) {
			t.Logf("refused: %v", err)
			return // refused: the promise holds
		}
		t.Fatal(err)
	}
	defer h.Close()
	put(h, "dave", "dave's new secret")
	raw, err := db.Collection("checkpoints").FindOne(t.Context(), bson.D{{Key: "thread_id", Value: "dave"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	t.Fatalf("a MongoDB database holding encrypted values (carol's), its newest checkpoint plaintext, opened without a key (Open = nil), "+
		"and the keyless process stored a new secret in the clear (in the raw document: %v)", bytes.Contains(raw, []byte("dave's new secret")))
}
