package checkpointertest

import (
	"fmt"
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
