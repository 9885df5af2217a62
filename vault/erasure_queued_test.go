package vault

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/durable"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/memvaulttest/testkeys"
)

// TestQueuedWriteAfterErasureRefused: once Forget returned, a write of
// the erased subject fails with keys.ErrSubjectErased in every durability
// mode, and nothing of it is stored, even once the subject is readmitted
// (found by review: with MEMVAULT_DURABILITY=exit the put was queued with
// no key looked up, acknowledged, and written under carol's new keys after
// her readmission).
func TestQueuedWriteAfterErasureRefused(t *testing.T) {
	for _, mode := range []durable.Mode{durable.Sync, durable.Exit} {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := context.Background()
			c := subjectsByThreadID(t)
			c.Durability = mode
			h, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			put := func(thread, text string, n int) error { return putNotes(ctx, h.Saver, thread, text, n) }
			if err := put("carol:chat", "carol, before her erasure", 0); err != nil {
				t.Fatal(err)
			}
			if _, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "carol:chat"}); err != nil {
				t.Fatal(err)
			}
			if _, err := h.Forget(ctx, "carol"); err != nil {
				t.Fatal(err)
			}
			// Forget returned: carol is erased. A stale agent still
			// running her conversation writes her thread again.
			err = put("carol:chat", "carol, written while she was erased", 1)
			if !errors.Is(err, keys.ErrSubjectErased) {
				t.Fatalf("%s: put of an erased subject = %v; want keys.ErrSubjectErased", mode, err)
			}
			if err := h.Readmit(ctx, "carol"); err != nil {
				t.Fatal(err)
			}
			tp, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "carol:chat"})
			if err != nil {
				t.Logf("GetTuple after readmit: %v", err)
			}
			if tp != nil {
				t.Fatalf("durability %s: a put of carol's made after Forget(carol) returned (while she was erased) was acknowledged and stored once she was readmitted: thread carol:chat reads %q",
					mode, tp.Checkpoint.ChannelValues["notes"])
			}
		})
	}
}

// TestQueuedPutDoesNotOutliveForgetOfAnotherProcess: an agent's put of
// carol queued (MEMVAULT_DURABILITY=exit) before another process (the CLI:
// a second handle on the same database and key table) erased and then
// readmitted her is refused when the queue is written — it is fenced by
// the key that sealed her values when it was queued, which the erasure
// destroyed — and the failure surfaces at the agent's next call on the
// thread (found by review: Forget drains only its own process's queues,
// and the put was stored after the receipt, under her new key). With the
// agent in sync mode the put is stored before Forget and erased by it.
func TestQueuedPutDoesNotOutliveForgetOfAnotherProcess(t *testing.T) {
	for _, mode := range []durable.Mode{durable.Sync, durable.Exit} {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := context.Background()
			c := subjectsByThreadID(t)
			cli := c
			c.Durability = mode
			agent, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer agent.Close()
			if err := putNotes(ctx, agent.Saver, "carol:chat", "carol, before her erasure", 0); err != nil {
				t.Fatal(err)
			}

			h, err := Open(ctx, cli) // `memvault forget carol`, then `memvault keys readmit carol`
			if err != nil {
				t.Fatal(err)
			}
			r, err := h.Forget(ctx, "carol")
			if err != nil {
				t.Fatal(err)
			}
			if err := h.Readmit(ctx, "carol"); err != nil {
				t.Fatal(err)
			}
			_ = h.Close()

			tp, err := agent.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "carol:chat"})
			if mode != durable.Sync && !errors.Is(err, keys.ErrSubjectErased) {
				t.Errorf("%s: the agent's next call on the thread: %v; want its queued put's keys.ErrSubjectErased", mode, err)
			}
			if tp != nil {
				t.Fatalf("durability %s: a put of carol's queued before `forget carol` (receipt: %d threads, keys %v) was stored after it, under her new key: thread carol:chat reads %q",
					mode, r.Threads, r.KeyIDs, tp.Checkpoint.ChannelValues["notes"])
			}
		})
	}
}

// TestQueuedPutSurvivesKeyRotation: the key a queued put is pinned to
// (PinThread) only has to stay live: a rotation of the subject's keys in
// another process between queueing and writing adds a newer key and keeps
// the old one, so the put is stored.
func TestQueuedPutSurvivesKeyRotation(t *testing.T) {
	ctx := context.Background()
	c := subjectsByThreadID(t)
	cli := c
	c.Durability = durable.Exit
	agent, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	if err := putNotes(ctx, agent.Saver, "carol:chat", "carol's plan", 0); err != nil {
		t.Fatal(err)
	}
	h, err := Open(ctx, cli)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Keys.RotateSubject(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	_ = h.Close()
	tp, err := agent.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "carol:chat"})
	if err != nil || tp == nil || tp.Checkpoint.ChannelValues["notes"] != "carol's plan" {
		t.Fatalf("the queued put after a rotation of carol's keys: %v, %v; want it stored", tp, err)
	}
}

// subjectsByThreadID is a SQLite configuration with per-subject keys taken
// from the thread id's prefix ("carol:chat" is carol's).
func subjectsByThreadID(t *testing.T) config.Config {
	c := config.Default()
	c.DBPath = filepath.Join(t.TempDir(), "agent.db")
	c.Keys.Primary = testkeys.Key
	c.Subjects.ThreadSeparator = ":"
	return c
}

// putNotes puts checkpoint n of thread holding text in its "notes" channel.
func putNotes(ctx context.Context, s checkpointer.Saver, thread, text string, n int) error {
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(n), ChannelValues: map[string]any{"notes": text},
		ChannelVersions: map[string]string{"notes": s.NextVersion("")}}
	_, err := s.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, nil, cp.ChannelVersions)
	return err
}
