package vault

import (
	"context"
	"errors"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/keys"
)

// s29eMetadata opens one handle with subjects named in checkpoint metadata
// (user_id) on backend, and returns it with put, read and copy helpers.
func s29eMetadata(t *testing.T, backend string) (*Handle, func(thread, notes string, md checkpointer.Metadata), func(thread string) (any, error), func(src, dst string) error) {
	t.Helper()
	ctx := context.Background()
	c := subjectsConfigOn(t, backend == "postgres")
	c.Subjects.ThreadSeparator = ""
	c.Subjects.ThreadMetadataKey = "user_id"
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	put := func(thread, notes string, md checkpointer.Metadata) {
		t.Helper()
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": notes},
			ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
		if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, md, cp.ChannelVersions); err != nil {
			t.Fatal(err)
		}
	}
	read := func(thread string) (any, error) {
		t.Helper()
		tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: thread})
		if err != nil || tup == nil {
			return nil, err
		}
		return tup.Checkpoint.ChannelValues["notes"], nil
	}
	cp := func(src, dst string) error { return h.Saver.(checkpointer.Copier).CopyThread(ctx, src, dst) }
	return h, put, read, cp
}

// TestReviewS29eRefusedCopyErasesInnocentThread (session 29 erasure
// review): with subjects named in metadata, a copy of carol's thread onto
// a thread bound to dave is refused (keys.ErrSubjectMismatch: nothing of
// carol's is stored there). But FollowThread recorded "dave's thread
// follows carol's" before the copy ran and was refused, and the record
// stayed: Forget(carol) then reached dave's thread, destroyed its keys and
// deleted dave's rows — an erasure of one user wiped another's thread,
// which never held a value of hers. A careless (or hostile) caller only
// needs to try the copy. Fixed: keys.Hierarchy.FollowThread refuses the
// copy before recording it when the destination is bound to another
// subject than its source.
func TestReviewS29eRefusedCopyErasesInnocentThread(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			h, put, read, copyThread := s29eMetadata(t, backend)
			put("carol-t", "carol: allergic to peanuts", checkpointer.Metadata{"user_id": "carol"})
			put("dave-t", "dave's own notes", checkpointer.Metadata{"user_id": "dave"})
			if err := copyThread("carol-t", "dave-t"); !errors.Is(err, keys.ErrSubjectMismatch) {
				t.Fatalf("copy of carol's thread onto dave's: %v, want keys.ErrSubjectMismatch", err)
			}
			if v, err := read("dave-t"); err != nil || v != "dave's own notes" {
				t.Fatalf("dave-t after the refused copy: %v, %v", v, err)
			}
			r, err := h.Forget(ctx, "carol")
			if err != nil {
				t.Fatal(err)
			}
			if r.Threads != 1 {
				t.Errorf("Forget(carol) deleted %d threads, want 1 (carol-t)", r.Threads)
			}
			if v, err := read("dave-t"); err != nil || v != "dave's own notes" {
				t.Errorf("dave-t after Forget(carol): %v, %v; a refused copy made carol's erasure wipe dave's thread", v, err)
			}
		})
	}
}

// TestReviewS29eNoopCopyErasesInnocentThread (session 29 erasure review):
// copying a thread that does not exist does nothing (CopyThread returns
// nil, stores nothing), but FollowThread recorded the copy first. A thread
// later created under that id and bound to carol then makes Forget(carol)
// reach the destination — dave's thread, which never held a value of
// carol's — and delete it. A mistyped source id of a fork is enough.
func TestReviewS29eNoopCopyErasesInnocentThread(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			h, put, read, copyThread := s29eMetadata(t, backend)
			put("dave-t", "dave's own notes", checkpointer.Metadata{"user_id": "dave"})
			if err := copyThread("ghost", "dave-t"); err != nil {
				t.Fatalf("copy of a thread that does not exist: %v", err)
			}
			if v, err := read("dave-t"); err != nil || v != "dave's own notes" {
				t.Fatalf("dave-t after copying nothing onto it: %v, %v", v, err)
			}
			put("ghost", "carol: allergic to peanuts", checkpointer.Metadata{"user_id": "carol"})
			if _, err := h.Forget(ctx, "carol"); err != nil {
				t.Fatal(err)
			}
			if v, err := read("dave-t"); err != nil || v != "dave's own notes" {
				t.Errorf("dave-t after Forget(carol): %v, %v; a copy that copied nothing made carol's erasure wipe dave's thread", v, err)
			}
		})
	}
}

// TestReviewS29eSelfCopyAndCycle (session 29 erasure review): through the
// saver, a thread copied onto itself, and two anonymous threads copied onto
// each other (a cycle) before one of them is bound to carol: every copy
// succeeds, the walk of the erasure ends, and Forget(carol) erases both
// threads of the cycle and leaves a bystander's.
func TestReviewS29eSelfCopyAndCycle(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			h, put, read, copyThread := s29eMetadata(t, backend)
			put("a", "anon notes", nil)
			put("bystander", "another visitor's notes", nil)
			for _, c := range [][2]string{{"a", "a"}, {"a", "b"}, {"b", "a"}, {"b", "b"}} {
				if err := copyThread(c[0], c[1]); err != nil {
					t.Fatalf("CopyThread(%s, %s): %v", c[0], c[1], err)
				}
			}
			put("a", "carol logged in", checkpointer.Metadata{"user_id": "carol"})
			r, err := h.Forget(ctx, "carol")
			if err != nil {
				t.Fatal(err)
			}
			if r.Threads != 2 {
				t.Errorf("Forget(carol) deleted %d threads, want 2 (a and b)", r.Threads)
			}
			for _, th := range []string{"a", "b"} {
				if v, err := read(th); v != nil || err != nil {
					t.Errorf("%s after Forget(carol): %v, %v", th, v, err)
				}
			}
			if v, err := read("bystander"); err != nil || v != "another visitor's notes" {
				t.Errorf("bystander after Forget(carol): %v, %v", v, err)
			}
		})
	}
}
