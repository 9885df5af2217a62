package checkpointertest

import (
	"errors"
	"testing"

	"github.com/memvault/memvault/checkpointer"
)

// testDeleteCheckpoint holds savers that implement
// checkpointer.CheckpointDeleter to its contract.
func (s *suite) testDeleteCheckpoint(t *testing.T) {
	deleter := func(t *testing.T, sv checkpointer.Saver) checkpointer.CheckpointDeleter {
		d, ok := sv.(checkpointer.CheckpointDeleter)
		if !ok {
			t.Skipf("%T does not implement checkpointer.CheckpointDeleter", sv)
		}
		return d
	}
	// chain stores cp0 (a@1, b@1), cp1 (a@2, b@1) and cp2 (a@2, b@2), each
	// the parent of the next and each with one pending write; cp1's value
	// of a is also cp2's.
	chain := func(t *testing.T, sv checkpointer.Saver, thread, ns string) [3]string {
		var ids [3]string
		cfg := cfgOf(thread, ns, "")
		steps := []struct {
			vals map[string]any
			vers map[string]string
			nv   map[string]string
		}{
			{map[string]any{"a": "a1", "b": "b1"}, map[string]string{"a": "1", "b": "1"}, map[string]string{"a": "1", "b": "1"}},
			{map[string]any{"a": "a2", "b": "b1"}, map[string]string{"a": "2", "b": "1"}, map[string]string{"a": "2"}},
			{map[string]any{"a": "a2", "b": "b2"}, map[string]string{"a": "2", "b": "2"}, map[string]string{"b": "2"}},
		}
		for i, st := range steps {
			cp := newCheckpoint(i, st.vals, st.vers)
			cfg = mustPut(t, sv, cfg, cp, checkpointer.Metadata{"step": i}, st.nv)
			mustPutWrites(t, sv, cfg, []wr{{"w", i}}, "task", "")
			ids[i] = cp.ID
		}
		return ids
	}
	t.Run("MiddleOfAChain", func(t *testing.T) {
		sv := s.newSaver(t)
		d := deleter(t, sv)
		thread := newThreadID("del")
		ids := chain(t, sv, thread, "")
		if err := d.DeleteCheckpoint(t.Context(), cfgOf(thread, "", ids[1])); err != nil {
			t.Fatal(err)
		}
		if tp := mustGet(t, sv, cfgOf(thread, "", ids[1])); tp != nil {
			t.Fatalf("deleted checkpoint still read: %s", tp.Checkpoint.ID)
		}
		// cp2 still reads a@2, the value cp1 wrote: shared values stay.
		latest := mustGetSome(t, sv, cfgOf(thread, "", ""))
		if latest.Checkpoint.ID != ids[2] || !Equal(map[string]any{"a": "a2", "b": "b2"}, latest.Checkpoint.ChannelValues) {
			t.Fatalf("latest = %s %v, want %s with a2, b2", latest.Checkpoint.ID, latest.Checkpoint.ChannelValues, ids[2])
		}
		if latest.ParentConfig == nil || latest.ParentConfig.CheckpointID != ids[1] {
			t.Fatalf("child's parent = %+v, want the deleted id %s kept", latest.ParentConfig, ids[1])
		}
		first := mustGetSome(t, sv, cfgOf(thread, "", ids[0]))
		if !Equal(map[string]any{"a": "a1", "b": "b1"}, first.Checkpoint.ChannelValues) || len(first.PendingWrites) != 1 {
			t.Fatalf("first checkpoint = %v, %d writes", first.Checkpoint.ChannelValues, len(first.PendingWrites))
		}
		if got := listThread(t, sv, thread, ""); len(got) != 2 {
			t.Fatalf("list shows %d checkpoints, want 2", len(got))
		}
		// Its writes went with it: the same id put again has none.
		cp := newCheckpoint(1, map[string]any{"a": "a2", "b": "b1"}, map[string]string{"a": "2", "b": "1"})
		cp.ID = ids[1]
		mustPut(t, sv, cfgOf(thread, "", ids[0]), cp, nil, nil)
		if tp := mustGetSome(t, sv, cfgOf(thread, "", ids[1])); len(tp.PendingWrites) != 0 {
			t.Fatalf("the deleted checkpoint's writes came back: %+v", tp.PendingWrites)
		}
	})
	t.Run("UnusedValuesGo", func(t *testing.T) {
		sv := s.newSaver(t)
		d := deleter(t, sv)
		thread := newThreadID("del")
		ids := chain(t, sv, thread, "")
		for _, id := range []string{ids[2], ids[1]} {
			if err := d.DeleteCheckpoint(t.Context(), cfgOf(thread, "", id)); err != nil {
				t.Fatal(err)
			}
		}
		// Nothing uses a@2 or b@2 now: a checkpoint naming them without
		// writing them finds no value (the rows were collected).
		cp := newCheckpoint(3, nil, map[string]string{"a": "2", "b": "2"})
		mustPut(t, sv, cfgOf(thread, "", ids[0]), cp, nil, nil)
		if tp := mustGetSome(t, sv, cfgOf(thread, "", cp.ID)); len(tp.Checkpoint.ChannelValues) != 0 {
			t.Fatalf("values of deleted checkpoints survive: %v", tp.Checkpoint.ChannelValues)
		}
		if tp := mustGetSome(t, sv, cfgOf(thread, "", ids[0])); !Equal(map[string]any{"a": "a1", "b": "b1"}, tp.Checkpoint.ChannelValues) {
			t.Fatalf("first checkpoint's values = %v", tp.Checkpoint.ChannelValues)
		}
	})
	t.Run("LatestAndNamespaces", func(t *testing.T) {
		sv := s.newSaver(t)
		d := deleter(t, sv)
		thread := newThreadID("del")
		root := chain(t, sv, thread, "")
		child := chain(t, sv, thread, childNS)
		if err := d.DeleteCheckpoint(t.Context(), cfgOf(thread, childNS, child[2])); err != nil {
			t.Fatal(err)
		}
		if tp := mustGetSome(t, sv, cfgOf(thread, childNS, "")); tp.Checkpoint.ID != child[1] {
			t.Fatalf("latest of the child namespace = %s, want %s", tp.Checkpoint.ID, child[1])
		}
		if tp := mustGetSome(t, sv, cfgOf(thread, "", "")); tp.Checkpoint.ID != root[2] || !Equal(map[string]any{"a": "a2", "b": "b2"}, tp.Checkpoint.ChannelValues) {
			t.Fatalf("root namespace changed: %s %v", tp.Checkpoint.ID, tp.Checkpoint.ChannelValues)
		}
		// The last checkpoint of a namespace.
		for _, id := range child[:2] {
			if err := d.DeleteCheckpoint(t.Context(), cfgOf(thread, childNS, id)); err != nil {
				t.Fatal(err)
			}
		}
		if tp := mustGet(t, sv, cfgOf(thread, childNS, "")); tp != nil {
			t.Fatalf("emptied namespace still has %s", tp.Checkpoint.ID)
		}
	})
	t.Run("V1ChildKeepsItsPendingSends", func(t *testing.T) {
		sv := s.newSaver(t)
		d := deleter(t, sv)
		thread := newThreadID("del")
		parent, child := v1WithSends(t, sv, thread, "", "r1", "r2")
		if err := d.DeleteCheckpoint(t.Context(), cfgOf(thread, "", parent)); err != nil {
			t.Fatal(err)
		}
		checkSendsKept(t, sv, thread, "", parent, child)
	})
	t.Run("MissingAndBadInput", func(t *testing.T) {
		sv := s.newSaver(t)
		d := deleter(t, sv)
		thread := newThreadID("del")
		ids := chain(t, sv, thread, "")
		if err := d.DeleteCheckpoint(t.Context(), cfgOf(thread, "", checkpointer.NewID(9))); err != nil {
			t.Fatalf("deleting a missing checkpoint: %v", err)
		}
		if err := d.DeleteCheckpoint(t.Context(), cfgOf(newThreadID("none"), "", ids[0])); err != nil {
			t.Fatalf("deleting in a missing thread: %v", err)
		}
		for name, c := range map[string]struct {
			cfg  checkpointer.Config
			want error
		}{
			"no thread":       {cfgOf("", "", ids[0]), checkpointer.ErrMissingThreadID},
			"no checkpoint":   {cfgOf(thread, "", ""), checkpointer.ErrMissingCheckpointID},
			"NUL in id":       {cfgOf(thread, "", "a\x00b"), checkpointer.ErrInvalidID},
			"bad UTF-8 in ns": {cfgOf(thread, "\xff", ids[0]), checkpointer.ErrInvalidID},
		} {
			if err := d.DeleteCheckpoint(t.Context(), c.cfg); !errors.Is(err, c.want) {
				t.Errorf("%s: %v, want %v", name, err, c.want)
			}
		}
		if got := listThread(t, sv, thread, ""); len(got) != 3 {
			t.Fatalf("bad input deleted something: %d checkpoints left", len(got))
		}
	})
}
