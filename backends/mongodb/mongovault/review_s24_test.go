package mongovault_test

import (
	"path/filepath"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/keys/sqlitekeys"
)

// TestReviewS24ErasedSubjectSampledAtOpen (session 24 review): vault's key
// check on MongoDB decrypts the first checkpoint document the server
// finds (mongosaver.Saver.SampleTuple, session 23). With per-subject keys
// that document may be an erased subject's: a Forget killed after its key
// transaction and before it deleted the rows (the state ForgetWith
// documents as "finished by running it again"), or an erasure Open itself
// finished from an intent (which destroys keys and deletes no row). Its
// values no longer decrypt — as erasure intends — and Open takes that for
// a wrong key: every Open is refused with ErrKeyNotLoaded, `memvault
// forget carol`, the way to delete the rows, included. On SQLite and
// PostgreSQL the probe reads key ids only and, with per-subject keys,
// judges only a missing key.
func TestReviewS24ErasedSubjectSampledAtOpen(t *testing.T) {
	for _, viaIntent := range []bool{false, true} {
		t.Run(map[bool]string{false: "ForgetKilledAfterKeys", true: "IntentFinishedByOpen"}[viaIntent], func(t *testing.T) {
			erasedSampledAtOpen(t, viaIntent)
		})
	}
}

// erasedSampledAtOpen: carol's keys destroyed and her rows left, by a
// Forget killed after its key transaction or (viaIntent) by an Open that
// finished a Forget killed after recording its intent (the intent row as
// claimErasure writes it).
func erasedSampledAtOpen(t *testing.T, viaIntent bool) {
	ctx := t.Context()
	db := mongotest.Database(t)
	env := subjectEnv(t, db.Name(), "MEMVAULT_KEY_TABLE", filepath.Join(t.TempDir(), "keys.db"))
	h, err := openEnv(t, env)
	if err != nil {
		t.Fatal(err)
	}
	for _, thread := range []string{"carol:1", "dave:1"} { // carol's document first
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": thread + " notes"},
			ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
		if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, nil, cp.ChannelVersions); err != nil {
			t.Fatal(err)
		}
	}
	if viaIntent {
		// The intent as ForgetWith signs it (the first erasure of the key
		// table, carol never erased before), then the process killed.
		kt, err := sqlitekeys.Open(ctx, env["MEMVAULT_KEY_TABLE"])
		if err != nil {
			t.Fatal(err)
		}
		tableID, err := kt.TableID(ctx)
		kt.Close()
		if err != nil {
			t.Fatal(err)
		}
		intent := h.Keys.SignIntent(tableID, 1, "carol", "")
		h.Close()
		if _, err := db.Collection("memvault_meta").InsertOne(ctx, bson.D{{Key: "_id", Value: "mark:erasure_intent_00000000000000000001"}, {Key: "value", Value: intent}}); err != nil {
			t.Fatal(err)
		}
		if h, err = openEnv(t, env); err != nil { // finishes the erasure: keys destroyed, rows left
			t.Fatalf("the Open that finishes the intent: %v", err)
		}
		if e, err := h.Keys.Erasure(ctx, "carol"); err != nil || e == nil {
			t.Fatalf("control: the Open did not finish carol's signed intent (erasure record %v, %v; warnings %q)", e, err, h.Warnings)
		}
	} else if _, err := h.Keys.StartErasure(ctx, "carol"); err != nil {
		// Forget(carol)'s key transaction, then the process is killed
		// before it deletes carol's threads.
		t.Fatal(err)
	}
	h.Close()

	h, err = openEnv(t, env)
	if err != nil {
		t.Fatalf("carol's keys destroyed and her rows left (viaIntent %v): the next Open is refused "+
			"(and so is the `forget carol` that would delete them): %v", viaIntent, err)
	}
	defer h.Close()
	if _, err := h.Forget(ctx, "carol"); err != nil {
		t.Fatalf("forget carol again: %v", err)
	}
}
