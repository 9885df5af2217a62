package checkpointertest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/keystest"
	"github.com/memvault/memvault/keys/memkeys"
	"github.com/memvault/memvault/serde"
)

// RunErasure checks that a backend fences writes against erasure: open
// must return a saver on the same storage every time it is called, using
// the given serializer (each call stands for another process, with a key
// cache of its own over one shared key table: table, or one in memory when
// it is nil).
//
// Process B writes a subject's thread, so that it holds the subject's key
// in its cache; process A destroys the subject's keys. Then B's writes of
// the subject — a checkpoint, pending writes, a copy of the thread — fail
// with keys.ErrSubjectErased and store nothing, while another subject's go
// on; and a process that never saw the subject cannot write it either (the
// subject stays erased: no new key is made for it).
func RunErasure(t *testing.T, table keys.Table, open func(t *testing.T, s serde.Serializer) checkpointer.Saver) {
	t.Helper()
	ctx := context.Background()
	if table == nil {
		table = memkeys.New()
	}
	process := func() (*keys.Hierarchy, checkpointer.Saver) {
		h := keystest.NewHierarchy(t, table, keys.Subjects{ThreadSeparator: "-"})
		return h, open(t, h)
	}
	put := func(s checkpointer.Saver, thread string, step int) (checkpointer.Config, error) {
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(step), ChannelValues: map[string]any{"notes": thread + " is allergic to peanuts"},
			ChannelVersions: map[string]string{"notes": s.NextVersion("")}}
		return s.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, nil, cp.ChannelVersions)
	}
	hA, a := process()
	_, b := process()
	carol, err := put(b, "carol-1", 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := put(a, "dave-1", 1); err != nil {
		t.Fatal(err)
	}

	// A copy of dave's thread to carol's, or to a thread of no subject,
	// would put dave's values under keys his erasure does not destroy.
	if c, ok := a.(checkpointer.Copier); ok {
		for _, dst := range []string{"carol-from-dave", "shared"} {
			if err := c.CopyThread(ctx, "dave-1", dst); !errors.Is(err, keys.ErrSubjectMismatch) {
				t.Fatalf("CopyThread(dave-1, %s) = %v, want keys.ErrSubjectMismatch", dst, err)
			}
			if tup, err := a.GetTuple(ctx, checkpointer.Config{ThreadID: dst}); err != nil || tup != nil {
				t.Fatalf("the refused copy to %s was stored: %v, %v", dst, tup, err)
			}
		}
		if err := c.CopyThread(ctx, "dave-1", "dave-copy"); err != nil {
			t.Fatalf("a copy within dave's threads: %v", err)
		}
	}

	if _, err := hA.StartErasure(ctx, "carol"); err != nil {
		t.Fatal(err)
	}

	if _, err := put(b, "carol-2", 2); !errors.Is(err, keys.ErrSubjectErased) {
		t.Fatalf("a checkpoint of an erased subject, from a process holding its key: %v, want keys.ErrSubjectErased", err)
	}
	if tup, err := a.GetTuple(ctx, checkpointer.Config{ThreadID: "carol-2"}); err != nil || tup != nil {
		t.Fatalf("the refused checkpoint was stored: %v, %v", tup, err)
	}
	if err := b.PutWrites(ctx, carol, []checkpointer.Write{{Channel: "notes", Value: "takes insulin"}}, "task-1", ""); !errors.Is(err, keys.ErrSubjectErased) {
		t.Fatalf("pending writes of an erased subject: %v, want keys.ErrSubjectErased", err)
	}
	if c, ok := b.(checkpointer.Copier); ok {
		if err := c.CopyThread(ctx, "carol-1", "carol-copy"); err == nil {
			t.Fatal("a copy of an erased subject's thread succeeded")
		}
		if tup, err := a.GetTuple(ctx, checkpointer.Config{ThreadID: "carol-copy"}); err == nil && tup != nil {
			t.Fatal("the refused copy was stored")
		}
	}
	if _, err := put(b, "dave-2", 2); err != nil {
		t.Fatalf("another subject after the erasure: %v", err)
	}
	_, c := process()
	if _, err := put(c, "carol-3", 3); !errors.Is(err, keys.ErrSubjectErased) {
		t.Fatalf("a new process writing the erased subject: %v, want keys.ErrSubjectErased (no new key for it)", err)
	}
	if tt, ok := table.(keys.ThreadTable); ok {
		runMetadataCopies(t, tt, open)
	}
}

// runMetadataCopies is RunErasure with subjects named in checkpoint
// metadata: copies of a thread made while it had no subject (anonymous,
// before a login), by another process, a copy of a copy, and a copy made
// after the login by a process that had just found the thread unbound,
// are all reached by the erasure of the user the login named: their
// values open in no process, a stale writer of a copy is refused, and so
// is a copy of one. Before session 29 the copies kept the pre-login
// values under keys of their own that the erasure left.
func runMetadataCopies(t *testing.T, table keys.ThreadTable, open func(t *testing.T, s serde.Serializer) checkpointer.Saver) {
	t.Helper()
	ctx := context.Background()
	process := func() (*keys.Hierarchy, checkpointer.Saver) {
		h := keystest.NewHierarchy(t, table, keys.Subjects{ThreadMetadataKey: "user_id"})
		return h, open(t, h)
	}
	put := func(s checkpointer.Saver, thread string, step int, md checkpointer.Metadata) error {
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(step), ChannelValues: map[string]any{"notes": "frank is allergic to peanuts"},
			ChannelVersions: map[string]string{"notes": s.NextVersion("")}}
		_, err := s.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, md, cp.ChannelVersions)
		return err
	}
	hA, a := process()
	_, b := process()
	ca, okA := a.(checkpointer.Copier)
	cb, okB := b.(checkpointer.Copier)
	if !okA || !okB {
		return
	}
	if err := put(a, "anon-m", 1, nil); err != nil {
		t.Fatal(err)
	}
	if err := put(a, "anon-other", 1, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][2]string{{"anon-m", "anon-m-copy"}, {"anon-m-copy", "anon-m-copy2"}, {"anon-other", "anon-other-copy"}} {
		if err := cb.CopyThread(ctx, c[0], c[1]); err != nil {
			t.Fatalf("CopyThread(%s, %s): %v", c[0], c[1], err)
		}
	}
	if tup, err := b.GetTuple(ctx, checkpointer.Config{ThreadID: "anon-m"}); err != nil || tup == nil {
		t.Fatalf("anon-m: %v, %v", tup, err)
	}
	if err := put(a, "anon-m", 2, checkpointer.Metadata{"user_id": "frank"}); err != nil {
		t.Fatal(err)
	}
	if err := cb.CopyThread(ctx, "anon-m", "anon-m-late"); err != nil {
		t.Fatalf("CopyThread(anon-m, anon-m-late): %v", err)
	}
	if _, err := hA.StartErasure(ctx, "frank"); err != nil {
		t.Fatal(err)
	}
	copies := []string{"anon-m", "anon-m-copy", "anon-m-copy2", "anon-m-late"}
	if ths, err := hA.SubjectThreads(ctx, "frank"); err != nil || fmt.Sprint(ths) != fmt.Sprint(copies) {
		t.Fatalf("threads the erasure of frank reaches: %q, %v; want %q", ths, err, copies)
	}
	_, c := process()
	for _, th := range copies {
		if tup, err := c.GetTuple(ctx, checkpointer.Config{ThreadID: th}); !errors.Is(err, serde.ErrDecrypt) {
			t.Fatalf("%s after frank's keys were destroyed: %v, %v; want serde.ErrDecrypt", th, tup, err)
		}
	}
	if tup, err := c.GetTuple(ctx, checkpointer.Config{ThreadID: "anon-other-copy"}); err != nil || tup == nil {
		t.Fatalf("a copy of another anonymous thread after frank's erasure: %v, %v", tup, err)
	}
	if err := put(b, "anon-m-copy2", 3, nil); !errors.Is(err, keys.ErrSubjectErased) {
		t.Fatalf("a stale writer of a copy after frank's erasure: %v, want keys.ErrSubjectErased", err)
	}
	if err := ca.CopyThread(ctx, "anon-m-copy", "anon-m-copy3"); !errors.Is(err, keys.ErrSubjectErased) {
		t.Fatalf("a copy of a copy after frank's erasure: %v, want keys.ErrSubjectErased", err)
	}
}
