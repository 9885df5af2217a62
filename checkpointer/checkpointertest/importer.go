package checkpointertest

import (
	"fmt"
	"testing"

	"github.com/memvault/memvault/checkpointer"
)

// testImportThread holds a checkpointer.ThreadImporter to its promise: a
// thread goes in whole or not at all, and importing a checkpoint that is
// already present completes its pending writes without duplicating them.
func (s *suite) testImportThread(t *testing.T) {
	importer := func(t *testing.T, sv checkpointer.Saver) checkpointer.ThreadImporter {
		t.Helper()
		im, ok := sv.(checkpointer.ThreadImporter)
		if !ok {
			t.Skipf("%T does not implement checkpointer.ThreadImporter", sv)
		}
		return im
	}
	// chain returns n import items of thread, each the parent of the next,
	// each with one pending write.
	chain := func(thread, ns string, n int) []checkpointer.ImportCheckpoint {
		var items []checkpointer.ImportCheckpoint
		parent := ""
		for i := range n {
			v := fmt.Sprint(i + 1)
			cp := newCheckpoint(i, map[string]any{"n": int64(i)}, map[string]string{"n": v})
			items = append(items, checkpointer.ImportCheckpoint{
				ThreadID: thread, CheckpointNS: ns, ID: cp.ID, ParentID: parent, Checkpoint: cp,
				Metadata: checkpointer.Metadata{"step": i}, NewVersions: map[string]string{"n": v},
				Writes: []checkpointer.ImportWrites{{TaskID: fmt.Sprintf("task-%d", i), Writes: []checkpointer.Write{{Channel: "n", Value: int64(100 + i)}}}},
			})
			parent = cp.ID
		}
		return items
	}
	s.runNS(t, []nsCase{
		{"failure_writes_nothing", func(t *testing.T, sv checkpointer.Saver, ns string) {
			im := importer(t, sv)
			thread := newThreadID("import")
			items := chain(thread, ns, 6)
			// The 5th checkpoint has a value no serializer takes.
			items[4].Checkpoint.ChannelValues["n"] = make(chan int)
			if err := im.ImportThread(t.Context(), items); err == nil {
				t.Fatal("ImportThread of a thread with an unserializable value succeeded")
			}
			if got := listThread(t, sv, thread, ns); len(got) != 0 {
				t.Fatalf("after a failed ImportThread the thread has %d checkpoints, want none", len(got))
			}
		}},
		{"completes_missing_writes", func(t *testing.T, sv checkpointer.Saver, ns string) {
			im := importer(t, sv)
			thread := newThreadID("import")
			items := chain(thread, ns, 3)
			// What an interrupted import left: the checkpoints, no writes.
			for _, it := range items {
				mustPut(t, sv, cfgOf(thread, ns, it.ParentID), it.Checkpoint, it.Metadata, it.NewVersions)
			}
			for i := range items {
				items[i].Checkpoint = nil
			}
			for range 2 { // the second run must change nothing
				if err := im.ImportThread(t.Context(), items); err != nil {
					t.Fatal(err)
				}
				got := listThread(t, sv, thread, ns)
				if len(got) != 3 {
					t.Fatalf("thread has %d checkpoints, want 3", len(got))
				}
				for _, tp := range got {
					if len(tp.PendingWrites) != 1 {
						t.Fatalf("checkpoint %s has %d pending writes, want 1", tp.Config.CheckpointID, len(tp.PendingWrites))
					}
				}
			}
		}},
	})
}
