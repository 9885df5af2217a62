package mongovault_test

import (
	"os"
	"path/filepath"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/checkpointer"
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
	env := map[string]string{
		"MEMVAULT_DSN":                      mongotest.URI(t),
		"MEMVAULT_SCHEMA":                   db.Name(),
		"MEMVAULT_EMBEDDINGS":               "none",
		"LANGGRAPH_AES_KEY":                 "0123456789abcdef0123456789abcdef",
		"MEMVAULT_SUBJECT_THREAD_SEPARATOR": ":",
		"MEMVAULT_KEY_TABLE":                keyFile,
	}
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
	env := map[string]string{
		"MEMVAULT_DSN":                      mongotest.URI(t),
		"MEMVAULT_SCHEMA":                   db.Name(),
		"MEMVAULT_EMBEDDINGS":               "none",
		"LANGGRAPH_AES_KEY":                 "0123456789abcdef0123456789abcdef",
		"MEMVAULT_SUBJECT_THREAD_SEPARATOR": ":",
		"MEMVAULT_KEY_TABLE":                keyFile,
	}
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
	if h, err = openEnv(t, env); err != nil {
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
