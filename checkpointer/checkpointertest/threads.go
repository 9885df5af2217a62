package checkpointertest

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"testing"

	"github.com/memvault/memvault/checkpointer"
)

// testListThreads checks checkpointer.ThreadLister, when implemented:
// every thread once, its checkpoints counted across namespaces, the latest
// id, most recent thread first, deleted threads gone.
func (s *suite) testListThreads(t *testing.T) {
	sv := s.newSaver(t)
	lister, ok := sv.(checkpointer.ThreadLister)
	if !ok {
		t.Skipf("%T does not implement checkpointer.ThreadLister", sv)
	}
	a, b, c := newThreadID("lt-a"), newThreadID("lt-b"), newThreadID("lt-c")
	putChain(t, sv, a, "", 3)
	ca := putChain(t, sv, a, childNS, 2) // ids grow with time: a's latest is here
	cb := putChain(t, sv, b, "", 1)
	putChain(t, sv, c, "", 2)
	cc := putChain(t, sv, c, childNS, 1) // c's latest checkpoint is in its child namespace
	list := func() []checkpointer.ThreadInfo {
		var out []checkpointer.ThreadInfo
		for ti, err := range lister.ListThreads(t.Context()) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, ti)
		}
		return out
	}
	want := []checkpointer.ThreadInfo{
		{ThreadID: c, Checkpoints: 3, LatestCheckpointID: cc[0].want.id},
		{ThreadID: b, Checkpoints: 1, LatestCheckpointID: cb[0].want.id},
		{ThreadID: a, Checkpoints: 5, LatestCheckpointID: ca[1].want.id},
	}
	if got := list(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("ListThreads =\n %v\nwant\n %v", got, want)
	}
	if err := sv.DeleteThread(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	if got := list(); fmt.Sprint(got) != fmt.Sprint(want[1:]) {
		t.Fatalf("after deleting %s: ListThreads = %v, want %v", c, got, want[1:])
	}
}

// rowThreadLister is engine.Saver's RowThreadIDs: every thread holding any
// row, which forget uses to find a subject's threads.
type rowThreadLister interface {
	RowThreadIDs(ctx context.Context) iter.Seq2[string, error]
}

// testRowThreadIDs checks RowThreadIDs, when the saver implements it
// (errors.ErrUnsupported from a driver without engine.RowThreads fails:
// every driver implements it since the Redis one does): every thread
// holding any row, ascending and once each — a thread holding only pending
// writes (for a checkpoint never stored) included, which ListThreads
// misses and an erasure must not — and a deleted thread gone.
func (s *suite) testRowThreadIDs(t *testing.T) {
	sv := s.newSaver(t)
	lister, ok := sv.(rowThreadLister)
	if !ok {
		t.Skipf("%T does not implement RowThreadIDs", sv)
	}
	a, b, c := newThreadID("rt-a"), newThreadID("rt-b"), newThreadID("rt-c")
	putChain(t, sv, a, "", 2)
	putChain(t, sv, a, childNS, 1)
	w := checkpointer.Config{ThreadID: b, CheckpointID: checkpointer.NewID(0)}
	if err := sv.PutWrites(t.Context(), w, []checkpointer.Write{{Channel: "ch", Value: "pending"}}, "task-1", ""); err != nil {
		t.Fatalf("put_writes of a thread without checkpoints: %v", err)
	}
	putChain(t, sv, c, "", 1)
	if err := sv.DeleteThread(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	prev := ""
	for id, err := range lister.RowThreadIDs(t.Context()) {
		if errors.Is(err, errors.ErrUnsupported) {
			t.Fatalf("%T: %v: an erasure could not find a thread holding only pending writes (implement engine.RowThreads)", sv, err)
		}
		if err != nil {
			t.Fatal(err)
		}
		if id <= prev {
			t.Fatalf("RowThreadIDs: %q after %q, want ascending ids, each once", id, prev)
		}
		prev = id
		seen[id]++
	}
	if seen[a] != 1 || seen[b] != 1 || seen[c] != 0 {
		t.Fatalf("RowThreadIDs listed %s %d times (checkpoints), %s %d times (pending writes only), %s %d times (deleted); want 1, 1, 0",
			a, seen[a], b, seen[b], c, seen[c])
	}
}
