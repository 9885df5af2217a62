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

// TestForgetWithQueuedWrite: with MEMVAULT_DURABILITY=exit (or async:
// exit only makes the timing certain) and per-subject keys, a put of
// carol's thread still queued when Forget("carol") begins is written after
// her keys are destroyed, so it fails (keys.ErrSubjectErased). The durable
// saver keeps that failure on the thread "until Flush", and returns it
// from every later call on it — including the Prune that Forget deletes
// her threads with. Forget fails, and running it again (which its doc
// promises finishes the same erasure) fails the same way: her rows are
// never deleted and the erasure never finishes, though nothing but the
// erasure itself made the put fail.
func TestForgetWithQueuedWrite(t *testing.T) {
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

// TestQueuedPutDoesNotOutliveErasure: with subjects by metadata
// (MEMVAULT_SUBJECT_THREAD_METADATA) Forget finds a subject's threads by
// their bindings, which a thread gets when its first checkpoint is
// written — so it waits for no queue of a thread not written yet. With
// MEMVAULT_DURABILITY=exit, carol's put of a new thread, queued before
// Forget("carol"), is still queued when Forget returns its receipt; once
// carol is readmitted (she signs up again), the queue is written, under
// her new keys: her state from before the erasure is stored after it,
// outside the receipt. The same sequence in sync mode stores nothing.
func TestQueuedPutDoesNotOutliveErasure(t *testing.T) {
	for _, mode := range []durable.Mode{durable.Sync, durable.Exit} {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := context.Background()
			c := config.Default()
			c.DBPath = filepath.Join(t.TempDir(), "agent.db")
			c.Keys.Primary = testkeys.Key
			c.Subjects.ThreadMetadataKey = "user_id"
			c.Durability = mode
			h, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": "carol, before her erasure"},
				ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
			if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: "chat-1"}, cp, checkpointer.Metadata{"user_id": "carol"}, cp.ChannelVersions); err != nil {
				t.Fatal(err)
			}
			if _, err := h.Forget(ctx, "carol"); err != nil {
				t.Fatal(err)
			}
			if err := h.Readmit(ctx, "carol"); err != nil {
				t.Fatal(err)
			}
			tp, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "chat-1"})
			if err != nil {
				t.Logf("GetTuple after readmit: %v", err)
			}
			if tp != nil {
				t.Fatalf("durability %s: a put of carol's queued before Forget(carol) returned was stored after it: thread chat-1 reads %q", mode, tp.Checkpoint.ChannelValues["notes"])
			}
		})
	}
}
