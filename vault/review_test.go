package vault

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/durable"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/memvaulttest/testkeys"
)

// TestReviewForgetWithQueuedWrite: with MEMVAULT_DURABILITY=exit (or async:
// exit only makes the timing certain) and per-subject keys, a put of
// carol's thread still queued when Forget("carol") begins is written after
// her keys are destroyed, so it fails (keys.ErrSubjectErased). The durable
// saver keeps that failure on the thread "until Flush", and returns it
// from every later call on it — including the Prune that Forget deletes
// her threads with. Forget fails, and running it again (which its doc
// promises finishes the same erasure) fails the same way: her rows are
// never deleted and the erasure never finishes, though nothing but the
// erasure itself made the put fail.
func TestReviewForgetWithQueuedWrite(t *testing.T) {
	ctx := context.Background()
	c := config.Default()
	c.DBPath = filepath.Join(t.TempDir(), "agent.db")
	c.Keys.Primary = testkeys.Key
	c.Subjects.ThreadSeparator = ":"
	c.Durability = durable.Exit
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	put := func(cfg checkpointer.Config, n int) checkpointer.Config {
		t.Helper()
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(n), ChannelValues: map[string]any{"notes": "carol secret"},
			ChannelVersions: map[string]string{"notes": h.Saver.NextVersion(cfg.CheckpointID)}}
		next, err := h.Saver.Put(ctx, cfg, cp, nil, cp.ChannelVersions)
		if err != nil {
			t.Fatal(err)
		}
		return next
	}
	cfg := put(checkpointer.Config{ThreadID: "carol:chat"}, 0)
	if _, err := h.Saver.GetTuple(ctx, cfg); err != nil { // stored
		t.Fatal(err)
	}
	put(cfg, 1) // queued, not written (exit mode)

	_, err1 := h.Forget(ctx, "carol")
	_, err2 := h.Forget(ctx, "carol")
	if err2 != nil {
		t.Fatalf("Forget with a put of the subject queued = %v; run again = %v (want the second run to finish the erasure)", err1, err2)
	}
	if tp, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "carol:chat"}); tp != nil {
		t.Fatalf("carol's thread after Forget: %v, %v", tp.Config, err)
	}
}
