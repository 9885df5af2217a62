package mongovault_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/vault"
)

// TestReviewS24bWrongKeyPassesOnErasedSample (session 24 review, second
// pass): the Open key check on MongoDB now takes a sampled value that does
// not decrypt for "an erased subject's" whenever the key table holds an
// erasure record of the thread's subject (vault.erasedThread) — whatever
// the reason it does not decrypt. With the first document an erased
// subject's (a Forget killed after its key transaction: the documented
// "run forget again" state), an Open with the WRONG master key is no
// longer refused: the one check that stops a process from writing under a
// mistyped LANGGRAPH_AES_KEY is skipped, though dave's document, one
// further, would have told.
func TestReviewS24bWrongKeyPassesOnErasedSample(t *testing.T) {
	ctx := t.Context()
	db := mongotest.Database(t)
	env := map[string]string{
		"MEMVAULT_DSN":                      mongotest.URI(t),
		"MEMVAULT_SCHEMA":                   db.Name(),
		"MEMVAULT_EMBEDDINGS":               "none",
		"LANGGRAPH_AES_KEY":                 "0123456789abcdef0123456789abcdef",
		"MEMVAULT_SUBJECT_THREAD_SEPARATOR": ":",
		"MEMVAULT_KEY_TABLE":                filepath.Join(t.TempDir(), "keys.db"),
	}
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
	h.Close()
	wrong := map[string]string{}
	for k, v := range env {
		wrong[k] = v
	}
	wrong["LANGGRAPH_AES_KEY"] = "fedcba9876543210fedcba9876543210"
	// Control: before carol's erasure the wrong key is refused.
	if hw, err := openEnv(t, wrong); err == nil {
		hw.Close()
		t.Fatal("control: the wrong master key passed Open before any erasure")
	}
	if h, err = openEnv(t, env); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Keys.StartErasure(ctx, "carol"); err != nil { // Forget(carol) killed after its key transaction
		t.Fatal(err)
	}
	h.Close()

	h, err = openEnv(t, wrong)
	if err == nil {
		defer h.Close()
		tup, rerr := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "dave:1"})
		t.Fatalf("Open with the wrong master key passed the key check (the sample was erased carol's document); dave:1 then reads %v, %.120v; "+
			"warnings %q", tup, rerr, h.Warnings)
	}
	if !errors.Is(err, vault.ErrKeyNotLoaded) {
		t.Logf("refused, but not as a wrong key: %v", err)
	}
}
