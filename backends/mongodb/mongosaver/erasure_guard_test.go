package mongosaver_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/memvault/memvault/backends/mongodb/mongosaver"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	_ "github.com/memvault/memvault/backends/mongodb/mongovault" // registers mongodb://
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	mvkeys "github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/vault"
)

// TestLateWriteOnCopiedKeyTable: the erasure guard on MongoDB, which has
// no transaction to run it in. A process on a copy of the key table taken
// before Forget(carol) — which still holds carol's keys — puts a
// checkpoint of thread carol:2, pending writes of thread carol:3 (of its
// checkpoint written before) and copies carol:3 to carol:9; each
// write stops at a point of its own (test hook) while Forget(carol) runs
// to completion in another process, then goes on. The writer holds no
// lease, as after its process was stopped longer than the lease's TTL:
// Forget's drain does not wait for it.
//
//   - "write": the write checked the guard before Forget recorded its
//     erasure, and stops just before its document is written (after its
//     lease is confirmed). Before the write checked the guard again after
//     writing, the checkpoint and the pending writes of carol, sealed
//     under a key the copied table still holds, outlived the erasure.
//   - "written": the write stored its document and stops before it checks
//     the guard again; Forget's deletion comes after and removes it.
//
// Either way no row of carol is left, and the late write fails with
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
		"MEMVAULT_DSN":                      mongotest.URI(t),
		"MEMVAULT_SCHEMA":                   db.Name(),
		"MEMVAULT_EMBEDDINGS":               "none",
		"LANGGRAPH_AES_KEY":                 "0123456789abcdef0123456789abcdef",
		"MEMVAULT_SUBJECT_THREAD_SEPARATOR": ":",
		"MEMVAULT_KEY_TABLE":                filepath.Join(dir, "keys.db"),
	}
	h := openVault(t, env)
	if err := h.Keys.RotateSubject(ctx, "carol"); err != nil { // carol has a key
		t.Fatal(err)
	}
	h.Close()
	onCopy := copyKeyTable(t, env, filepath.Join(dir, "copied-keys.db"))
	stale := openVault(t, onCopy)
	defer stale.Close()
	// The writer's saver takes no lease, like one whose lease expired
	// while its process was stopped longer than the lease's TTL: Forget's
	// drain does not wait for its writes. (Deleting the lease of a saver
	// that runs is not the same: its renewal sees the loss and cancels
	// the write.)
	sv, err := mongosaver.New(db, mongosaver.Options{Serde: stale.Serde, NoLeases: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sv.Close()

	// Thread carol:3 has a checkpoint (Forget lists the threads that
	// have one), its pending writes come later.
	cp3 := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": "carol's notes"},
		ChannelVersions: map[string]string{"notes": sv.NextVersion("")}}
	if _, err := sv.Put(ctx, checkpointer.Config{ThreadID: "carol:3"}, cp3, nil, cp3.ChannelVersions); err != nil {
		t.Fatal(err)
	}
	paused, resume := make(chan string, 3), make(chan struct{})
	var armed atomic.Bool
	armed.Store(true)
	hook := func(point, thread string) {
		if point == at && strings.HasPrefix(thread, "carol:") && armed.Load() {
			paused <- thread
			<-resume
		}
	}
	mongosaver.SetWriteHook(sv, hook)
	ops := 2
	errs := make(chan error, 3)
	if at == "write" {
		// A copy into carol:9 (an Update: the fence given to Fence, then
		// Overwrite), by a second saver: an Update waits for this
		// saver's puts under way.
		cp, err := mongosaver.New(db, mongosaver.Options{Serde: stale.Serde, NoLeases: true})
		if err != nil {
			t.Fatal(err)
		}
		defer cp.Close()
		mongosaver.SetWriteHook(cp, hook)
		ops++
		go func() { errs <- cp.CopyThread(ctx, "carol:3", "carol:9") }()
	}
	go func() {
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": "carol takes insulin"},
			ChannelVersions: map[string]string{"notes": sv.NextVersion("")}}
		_, err := sv.Put(ctx, checkpointer.Config{ThreadID: "carol:2"}, cp, nil, cp.ChannelVersions)
		errs <- err
	}()
	go func() {
		errs <- sv.PutWrites(ctx, checkpointer.Config{ThreadID: "carol:3", CheckpointID: cp3.ID},
			[]checkpointer.Write{{Channel: "notes", Value: "carol takes insulin"}}, "task", "")
	}()
	for range ops {
		<-paused
	}
	live := openVault(t, env)
	if _, err := live.Forget(ctx, "carol"); err != nil {
		t.Fatalf("forget carol: %v", err)
	}
	live.Close()
	armed.Store(false)
	close(resume)
	for range ops {
		if err := <-errs; !errors.Is(err, mvkeys.ErrSubjectErased) {
			t.Errorf("a write of carol on a copy of the key table, stopped at %q across Forget(carol): %v, want keys.ErrSubjectErased", at, err)
		}
	}
	for _, c := range []struct{ coll, thread string }{{"checkpoints", "carol:2"}, {"checkpoint_writes", "carol:3"}, {"checkpoints", "carol:9"}} {
		coll, thread := c.coll, c.thread
		n, err := db.Collection(coll).CountDocuments(ctx, bson.D{{Key: "thread_id", Value: thread}})
		if err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%d documents of thread %s in %s after Forget(carol) returned and the write stopped at %q went on: "+
				"carol's values, sealed under a key the copied table holds, outlive her erasure", n, thread, coll, at)
		}
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

// copyKeyTable copies env's key table file to path and returns env with
// the copy as its key table: a process running on a copy, or a backup, of
// the key table.
func copyKeyTable(t *testing.T, env map[string]string, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(env["MEMVAULT_KEY_TABLE"])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k, v := range env {
		out[k] = v
	}
	out["MEMVAULT_KEY_TABLE"] = path
	return out
}
