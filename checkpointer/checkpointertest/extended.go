package checkpointertest

import (
	"errors"
	"testing"

	"github.com/memvault/memvault/checkpointer"
)

func (s *suite) testDeleteThread(t *testing.T) {
	s.runNS(t, []nsCase{
		{"removes_checkpoints_and_writes_in_all_namespaces", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("del")
			a := putChain(t, sv, thread, ns, 2)
			b := putChain(t, sv, thread, "other:5", 2)
			mustPutWrites(t, sv, a[1].cfg, []wr{{"ch", 1}}, "task", "")
			mustPutWrites(t, sv, b[1].cfg, []wr{{"ch", 2}}, "task", "")
			if err := sv.DeleteThread(t.Context(), thread); err != nil {
				t.Fatal(err)
			}
			for _, n := range []string{ns, "other:5"} {
				if tp := mustGet(t, sv, cfgOf(thread, n, "")); tp != nil {
					t.Fatalf("namespace %q still has %s", n, tp.Config.CheckpointID)
				}
			}
			c := cfgOf(thread, "", "")
			if got := mustList(t, sv, &c, checkpointer.ListOptions{AllNamespaces: true}); len(got) != 0 {
				t.Fatalf("deleted thread lists %d tuples", len(got))
			}
			// The thread id can be reused; no stale writes come back.
			cp := newCheckpoint(0, nil, nil)
			cp.ID = a[1].want.id
			mustPut(t, sv, cfgOf(thread, ns, ""), cp, nil, nil)
			checkTuple(t, mustGetSome(t, sv, cfgOf(thread, ns, "")), want{thread: thread, ns: ns, id: cp.ID, cp: cloneCheckpoint(cp)})
		}},
		{"keeps_other_threads", func(t *testing.T, sv checkpointer.Saver, ns string) {
			t1, t2 := newThreadID("del"), newThreadID("del")
			putChain(t, sv, t1, ns, 2)
			keep := putChain(t, sv, t2, ns, 2)
			mustPutWrites(t, sv, keep[1].cfg, []wr{{"ch", "kept"}}, "task", "")
			if err := sv.DeleteThread(t.Context(), t1); err != nil {
				t.Fatal(err)
			}
			got := listThread(t, sv, t2, ns)
			checkIDs(t, "other thread", idsOf(got), reversedIDs(keep))
			w := keep[1].want
			w.writes = []pw{{"task", "ch", "kept"}}
			checkTuple(t, got[0], w)
		}},
		{"unknown_thread_is_noop", func(t *testing.T, sv checkpointer.Saver, ns string) {
			keep := putChain(t, sv, newThreadID("del"), ns, 1)
			if err := sv.DeleteThread(t.Context(), newThreadID("nobody")); err != nil {
				t.Fatalf("DeleteThread(unknown) = %v, want nil", err)
			}
			checkTuple(t, mustGetSome(t, sv, keep[0].cfg), keep[0].want)
		}},
	})
}

func (s *suite) testPrune(t *testing.T) {
	pruner := func(t *testing.T, sv checkpointer.Saver) checkpointer.Pruner {
		t.Helper()
		p, ok := sv.(checkpointer.Pruner)
		if !ok {
			t.Skipf("%T does not implement checkpointer.Pruner", sv)
		}
		return p
	}
	s.runNS(t, []nsCase{
		{"keep_latest_single_thread", func(t *testing.T, sv checkpointer.Saver, ns string) {
			p := pruner(t, sv)
			thread := newThreadID("prune")
			chain := putChain(t, sv, thread, ns, 4)
			if err := p.Prune(t.Context(), []string{thread}, checkpointer.PruneKeepLatest); err != nil {
				t.Fatal(err)
			}
			got := listThread(t, sv, thread, ns)
			checkIDs(t, "after prune", idsOf(got), []string{chain[3].want.id})
			// The survivor still reads "base", written by the first
			// checkpoint and referenced through its version.
			checkTuple(t, got[0], chain[3].want)
		}},
		{"keep_latest_multiple_threads", func(t *testing.T, sv checkpointer.Saver, ns string) {
			p := pruner(t, sv)
			t1, t2 := newThreadID("prune"), newThreadID("prune")
			c1 := putChain(t, sv, t1, ns, 3)
			c2 := putChain(t, sv, t2, ns, 2)
			if err := p.Prune(t.Context(), []string{t1, t2}, checkpointer.PruneKeepLatest); err != nil {
				t.Fatal(err)
			}
			checkIDs(t, "t1", idsOf(listThread(t, sv, t1, ns)), []string{c1[2].want.id})
			checkIDs(t, "t2", idsOf(listThread(t, sv, t2, ns)), []string{c2[1].want.id})
			checkTuple(t, mustGetSome(t, sv, cfgOf(t2, ns, "")), c2[1].want)
		}},
		{"keep_latest_per_namespace", func(t *testing.T, sv checkpointer.Saver, ns string) {
			p := pruner(t, sv)
			thread := newThreadID("prune")
			a := putChain(t, sv, thread, ns, 3)
			b := putChain(t, sv, thread, "other:6", 2)
			if err := p.Prune(t.Context(), []string{thread}, checkpointer.PruneKeepLatest); err != nil {
				t.Fatal(err)
			}
			checkIDs(t, "ns", idsOf(listThread(t, sv, thread, ns)), []string{a[2].want.id})
			checkIDs(t, "other", idsOf(listThread(t, sv, thread, "other:6")), []string{b[1].want.id})
			checkTuple(t, mustGetSome(t, sv, cfgOf(thread, "other:6", "")), b[1].want)
		}},
		{"keep_latest_preserves_its_writes", func(t *testing.T, sv checkpointer.Saver, ns string) {
			p := pruner(t, sv)
			thread := newThreadID("prune")
			chain := putChain(t, sv, thread, ns, 3)
			mustPutWrites(t, sv, chain[1].cfg, []wr{{"ch", "old"}}, "task-old", "")
			mustPutWrites(t, sv, chain[2].cfg, []wr{{"ch", "val"}}, "task", "")
			if err := p.Prune(t.Context(), []string{thread}, checkpointer.PruneKeepLatest); err != nil {
				t.Fatal(err)
			}
			w := chain[2].want
			w.writes = []pw{{"task", "ch", "val"}}
			checkTuple(t, mustGetSome(t, sv, cfgOf(thread, ns, "")), w)
		}},
		{"keep_latest_removes_orphan_writes", func(t *testing.T, sv checkpointer.Saver, ns string) {
			// Writes whose checkpoint is not stored are history like the
			// checkpoints before the latest: they go. A driver is asked
			// for them only when the rule removes them
			// (HeadSelector.Orphans).
			p := pruner(t, sv)
			thread := newThreadID("prune")
			chain := putChain(t, sv, thread, ns, 2)
			orphan := checkpointer.NewID(7)
			mustPutWrites(t, sv, cfgOf(thread, ns, orphan), []wr{{"ch", "orphan_val"}}, "task", "")
			if err := p.Prune(t.Context(), []string{thread}, checkpointer.PruneKeepLatest); err != nil {
				t.Fatal(err)
			}
			checkIDs(t, "after prune", idsOf(listThread(t, sv, thread, ns)), []string{chain[1].want.id})
			// Writes would show once their checkpoint is stored.
			cp := newCheckpoint(7, nil, nil)
			cp.ID = orphan
			mustPut(t, sv, cfgOf(thread, ns, ""), cp, nil, nil)
			checkTuple(t, mustGetSome(t, sv, cfgOf(thread, ns, orphan)), want{thread: thread, ns: ns, id: orphan})
		}},
		{"delete_strategy", func(t *testing.T, sv checkpointer.Saver, ns string) {
			p := pruner(t, sv)
			thread := newThreadID("prune")
			putChain(t, sv, thread, ns, 3)
			putChain(t, sv, thread, "other:7", 1)
			if err := p.Prune(t.Context(), []string{thread}, checkpointer.PruneDelete); err != nil {
				t.Fatal(err)
			}
			c := cfgOf(thread, "", "")
			if got := mustList(t, sv, &c, checkpointer.ListOptions{AllNamespaces: true}); len(got) != 0 {
				t.Fatalf("%d tuples left after PruneDelete", len(got))
			}
		}},
		{"other_threads_untouched", func(t *testing.T, sv checkpointer.Saver, ns string) {
			p := pruner(t, sv)
			t1, t2 := newThreadID("prune"), newThreadID("prune")
			putChain(t, sv, t1, ns, 3)
			keep := putChain(t, sv, t2, ns, 2)
			for _, strategy := range []checkpointer.PruneStrategy{checkpointer.PruneKeepLatest, checkpointer.PruneDelete} {
				if err := p.Prune(t.Context(), []string{t1}, strategy); err != nil {
					t.Fatal(err)
				}
				got := listThread(t, sv, t2, ns)
				checkIDs(t, "untouched", idsOf(got), reversedIDs(keep))
				checkTuple(t, got[1], keep[0].want)
			}
		}},
		{"empty_and_unknown_are_noops", func(t *testing.T, sv checkpointer.Saver, ns string) {
			p := pruner(t, sv)
			keep := putChain(t, sv, newThreadID("prune"), ns, 2)
			for _, strategy := range []checkpointer.PruneStrategy{checkpointer.PruneKeepLatest, checkpointer.PruneDelete} {
				if err := p.Prune(t.Context(), nil, strategy); err != nil {
					t.Fatalf("Prune(nil) = %v", err)
				}
				if err := p.Prune(t.Context(), []string{newThreadID("nobody")}, strategy); err != nil {
					t.Fatalf("Prune(unknown) = %v", err)
				}
			}
			checkIDs(t, "untouched", idsOf(listThread(t, sv, keep[0].want.thread, ns)), reversedIDs(keep))
		}},
		{"unknown_strategy_is_an_error", func(t *testing.T, sv checkpointer.Saver, ns string) {
			// Checked before anything else, with or without threads: a
			// caller's bug must not look like a successful prune.
			p := pruner(t, sv)
			keep := putChain(t, sv, newThreadID("prune"), ns, 2)
			for _, threads := range [][]string{nil, {keep[0].want.thread}} {
				if err := p.Prune(t.Context(), threads, checkpointer.PruneStrategy(99)); err == nil {
					t.Fatalf("Prune(%q, strategy 99) = nil, want an error", threads)
				}
			}
			checkIDs(t, "untouched", idsOf(listThread(t, sv, keep[0].want.thread, ns)), reversedIDs(keep))
		}},
		{"keep_latest_keeps_legacy_pending_sends", func(t *testing.T, sv checkpointer.Saver, ns string) {
			// A v<4 checkpoint reads its pending sends from its parent's
			// __pregel_tasks writes: pruning the parent away must keep them.
			p := pruner(t, sv)
			thread := newThreadID("prune")
			parent := newCheckpoint(0, nil, nil)
			parent.V = 1
			pcfg := mustPut(t, sv, cfgOf(thread, ns, ""), parent, checkpointer.Metadata{"source": "loop", "step": 0}, nil)
			mustPutWrites(t, sv, pcfg, []wr{{checkpointer.ChannelTasks, "send-1"}, {checkpointer.ChannelTasks, "send-2"}}, "task-1", "")
			child := newCheckpoint(1, nil, nil)
			child.V = 1
			mustPut(t, sv, pcfg, child, checkpointer.Metadata{"source": "loop", "step": 1}, nil)
			if err := p.Prune(t.Context(), []string{thread}, checkpointer.PruneKeepLatest); err != nil {
				t.Fatal(err)
			}
			checkIDs(t, "after prune", idsOf(listThread(t, sv, thread, ns)), []string{child.ID})
			got := mustGetSome(t, sv, cfgOf(thread, ns, child.ID))
			if !Equal([]any{"send-1", "send-2"}, got.Checkpoint.ChannelValues[checkpointer.ChannelTasks]) {
				t.Fatalf("pending sends after prune = %#v, want [send-1 send-2]", got.Checkpoint.ChannelValues[checkpointer.ChannelTasks])
			}
		}},
		{"keep_latest_legacy_chain_and_orphan_namespace", func(t *testing.T, sv checkpointer.Saver, ns string) {
			// v1 chain a -> b -> c: c stays and reads its pending sends
			// from b's ChannelTasks writes, which stay; a's go, as do its
			// other writes and a namespace holding writes and no
			// checkpoint. Re-stored under their ids, a and the orphan
			// show no writes.
			p := pruner(t, sv)
			thread := newThreadID("prune")
			var chain []*checkpointer.Checkpoint
			cfg := cfgOf(thread, ns, "")
			for i, send := range []string{"send-a", "send-b", ""} {
				cp := newCheckpoint(i, nil, nil)
				cp.V = 1
				cfg = mustPut(t, sv, cfg, cp, checkpointer.Metadata{"source": "loop", "step": i}, nil)
				if send != "" {
					mustPutWrites(t, sv, cfg, []wr{{checkpointer.ChannelTasks, send}, {"ch", "w-" + send}}, "task-1", "")
				}
				chain = append(chain, cp)
			}
			orphan := checkpointer.NewID(8)
			mustPutWrites(t, sv, cfgOf(thread, "orphans:9", orphan), []wr{{"ch", "orphan_val"}}, "task", "")
			if err := p.Prune(t.Context(), []string{thread}, checkpointer.PruneKeepLatest); err != nil {
				t.Fatal(err)
			}
			c := chain[2]
			checkIDs(t, "after prune", idsOf(listThread(t, sv, thread, ns)), []string{c.ID})
			got := mustGetSome(t, sv, cfgOf(thread, ns, c.ID))
			if !Equal([]any{"send-b"}, got.Checkpoint.ChannelValues[checkpointer.ChannelTasks]) {
				t.Fatalf("pending sends after prune = %#v, want [send-b]", got.Checkpoint.ChannelValues[checkpointer.ChannelTasks])
			}
			for _, re := range []struct{ ns, id string }{{ns, chain[0].ID}, {"orphans:9", orphan}} {
				cp := newCheckpoint(9, nil, nil)
				cp.ID = re.id
				mustPut(t, sv, cfgOf(thread, re.ns, ""), cp, nil, nil)
				checkTuple(t, mustGetSome(t, sv, cfgOf(thread, re.ns, re.id)), want{thread: thread, ns: re.ns, id: re.id})
			}
		}},
		{"keep_latest_then_continue", func(t *testing.T, sv checkpointer.Saver, ns string) {
			p := pruner(t, sv)
			thread := newThreadID("prune")
			chain := putChain(t, sv, thread, ns, 3)
			if err := p.Prune(t.Context(), []string{thread}, checkpointer.PruneKeepLatest); err != nil {
				t.Fatal(err)
			}
			// A step after pruning reuses the surviving values by version.
			last := chain[2].want.cp
			v := sv.NextVersion(last.ChannelVersions["counter"])
			versions := copyVersions(last.ChannelVersions)
			versions["counter"] = v
			cp := newCheckpoint(2, map[string]any{"counter": 99}, versions)
			mustPut(t, sv, chain[2].cfg, cp, nil, map[string]string{"counter": v})
			w := cloneCheckpoint(cp)
			w.ChannelValues = map[string]any{"counter": 99, "base": "base value"}
			checkTuple(t, mustGetSome(t, sv, cfgOf(thread, ns, "")), want{thread: thread, ns: ns, id: cp.ID, parent: chain[2].want.id, cp: w})
		}},
	})
}

func (s *suite) testCopyThread(t *testing.T) {
	copier := func(t *testing.T, sv checkpointer.Saver) checkpointer.Copier {
		t.Helper()
		c, ok := sv.(checkpointer.Copier)
		if !ok {
			t.Skipf("%T does not implement checkpointer.Copier", sv)
		}
		return c
	}
	// moved is w as it must read on thread dst.
	moved := func(w want, dst string) want {
		w.thread = dst
		return w
	}
	s.runNS(t, []nsCase{
		{"copies_every_checkpoint_value_and_metadata", func(t *testing.T, sv checkpointer.Saver, ns string) {
			c := copier(t, sv)
			src, dst := copyIDs()
			chain := putChain(t, sv, src, ns, 3)
			if err := c.CopyThread(t.Context(), src, dst); err != nil {
				t.Fatal(err)
			}
			got := listThread(t, sv, dst, ns)
			checkIDs(t, "copy", idsOf(got), reversedIDs(chain))
			for i, tp := range got {
				checkTuple(t, tp, moved(chain[len(chain)-1-i].want, dst))
			}
		}},
		{"copies_namespaces", func(t *testing.T, sv checkpointer.Saver, ns string) {
			c := copier(t, sv)
			src, dst := copyIDs()
			a := putChain(t, sv, src, ns, 1)
			b := putChain(t, sv, src, "other:8", 2)
			if err := c.CopyThread(t.Context(), src, dst); err != nil {
				t.Fatal(err)
			}
			checkTuple(t, mustGetSome(t, sv, cfgOf(dst, ns, "")), moved(a[0].want, dst))
			checkIDs(t, "other", idsOf(listThread(t, sv, dst, "other:8")), reversedIDs(b))
			checkTuple(t, mustGetSome(t, sv, cfgOf(dst, "other:8", "")), moved(b[1].want, dst))
		}},
		{"copies_writes", func(t *testing.T, sv checkpointer.Saver, ns string) {
			c := copier(t, sv)
			src, dst := copyIDs()
			chain := putChain(t, sv, src, ns, 2)
			mustPutWrites(t, sv, chain[1].cfg, []wr{{"ch", "write_val"}, {checkpointer.ChannelError, "e"}}, "task", "path")
			mustPutWrites(t, sv, chain[0].cfg, []wr{{"old", []byte("b")}}, "task-0", "")
			if err := c.CopyThread(t.Context(), src, dst); err != nil {
				t.Fatal(err)
			}
			w := moved(chain[1].want, dst)
			w.writes = []pw{{"task", checkpointer.ChannelError, "e"}, {"task", "ch", "write_val"}}
			checkTuple(t, mustGetSome(t, sv, cfgOf(dst, ns, "")), w)
			w0 := moved(chain[0].want, dst)
			w0.writes = []pw{{"task-0", "old", []byte("b")}}
			checkTuple(t, mustGetSome(t, sv, cfgOf(dst, ns, chain[0].want.id)), w0)
		}},
		{"source_unchanged", func(t *testing.T, sv checkpointer.Saver, ns string) {
			c := copier(t, sv)
			src, dst := copyIDs()
			chain := putChain(t, sv, src, ns, 2)
			mustPutWrites(t, sv, chain[1].cfg, []wr{{"ch", 1}}, "task", "")
			if err := c.CopyThread(t.Context(), src, dst); err != nil {
				t.Fatal(err)
			}
			got := listThread(t, sv, src, ns)
			checkIDs(t, "source", idsOf(got), reversedIDs(chain))
			w := chain[1].want
			w.writes = []pw{{"task", "ch", 1}}
			checkTuple(t, got[0], w)
			// The copy is independent: deleting it leaves the source.
			if err := sv.DeleteThread(t.Context(), dst); err != nil {
				t.Fatal(err)
			}
			checkTuple(t, mustGetSome(t, sv, cfgOf(src, ns, "")), w)
		}},
		{"copy_is_independent_of_source", func(t *testing.T, sv checkpointer.Saver, ns string) {
			c := copier(t, sv)
			src, dst := copyIDs()
			chain := putChain(t, sv, src, ns, 2)
			if err := c.CopyThread(t.Context(), src, dst); err != nil {
				t.Fatal(err)
			}
			if err := sv.DeleteThread(t.Context(), src); err != nil {
				t.Fatal(err)
			}
			checkTuple(t, mustGetSome(t, sv, cfgOf(dst, ns, "")), moved(chain[1].want, dst))
		}},
		{"copies_orphan_writes", func(t *testing.T, sv checkpointer.Saver, ns string) {
			// Writes whose checkpoint is not stored (a run that crashed
			// between PutWrites and Put, or a checkpoint deleted with its
			// writes kept for a v<4 child) are rows of the thread like
			// any other: the copy takes them all, re-sealed for dst.
			c := copier(t, sv)
			src, dst := copyIDs()
			chain := putChain(t, sv, src, ns, 1)
			orphan := checkpointer.NewID(7)
			mustPutWrites(t, sv, cfgOf(src, ns, orphan), []wr{{"ch", "orphan_val"}, {checkpointer.ChannelError, "e"}}, "task", "path")
			if err := c.CopyThread(t.Context(), src, dst); err != nil {
				t.Fatal(err)
			}
			checkTuple(t, mustGetSome(t, sv, cfgOf(dst, ns, "")), moved(chain[0].want, dst))
			// The writes show once their checkpoint is stored on dst.
			cp := newCheckpoint(7, nil, nil)
			cp.ID = orphan
			mustPut(t, sv, cfgOf(dst, ns, ""), cp, nil, nil)
			checkTuple(t, mustGetSome(t, sv, cfgOf(dst, ns, orphan)), want{thread: dst, ns: ns, id: orphan,
				writes: []pw{{"task", checkpointer.ChannelError, "e"}, {"task", "ch", "orphan_val"}}})
		}},
		{"replaces_destination_rows", func(t *testing.T, sv checkpointer.Saver, ns string) {
			// dst already holds rows under the keys the copy writes: the
			// same checkpoint id (another parent and metadata), a value
			// at the same (channel, version), a write at the same (task,
			// idx). After the copy every one of them is src's.
			c := copier(t, sv)
			src, dst := copyIDs()
			chain := putChain(t, sv, src, ns, 2)
			mustPutWrites(t, sv, chain[1].cfg, []wr{{"ch", "src_write"}}, "task", "path")
			last := chain[1].want.cp
			stale := cloneCheckpoint(last)
			stale.ChannelValues = map[string]any{"counter": int64(-1), "base": "stale base"}
			mustPut(t, sv, cfgOf(dst, ns, ""), stale, checkpointer.Metadata{"source": "stale"}, copyVersions(last.ChannelVersions))
			mustPutWrites(t, sv, cfgOf(dst, ns, last.ID), []wr{{"ch", "stale_write"}}, "task", "path")
			if err := c.CopyThread(t.Context(), src, dst); err != nil {
				t.Fatal(err)
			}
			w := moved(chain[1].want, dst)
			w.writes = []pw{{"task", "ch", "src_write"}}
			checkTuple(t, mustGetSome(t, sv, cfgOf(dst, ns, last.ID)), w)
			checkIDs(t, "copy", idsOf(listThread(t, sv, dst, ns)), reversedIDs(chain))
		}},
		{"unknown_source", func(t *testing.T, sv checkpointer.Saver, ns string) {
			c := copier(t, sv)
			src, dst := copyIDs()
			if err := c.CopyThread(t.Context(), src, dst); err != nil && !errors.Is(err, checkpointer.ErrNotFound) {
				t.Fatalf("CopyThread(unknown) = %v, want nil or ErrNotFound", err)
			}
			d := cfgOf(dst, "", "")
			if got := mustList(t, sv, &d, checkpointer.ListOptions{AllNamespaces: true}); len(got) != 0 {
				t.Fatalf("destination has %d tuples", len(got))
			}
		}},
		{"missing_thread_id", func(t *testing.T, sv checkpointer.Saver, ns string) {
			c := copier(t, sv)
			for _, pair := range [][2]string{{"", "dst"}, {"src", ""}} {
				if err := c.CopyThread(t.Context(), pair[0], pair[1]); !errors.Is(err, checkpointer.ErrMissingThreadID) {
					t.Fatalf("CopyThread(%q, %q) = %v, want ErrMissingThreadID", pair[0], pair[1], err)
				}
			}
		}},
	})
}

func (s *suite) testDeleteForRuns(t *testing.T) {
	deleter := func(t *testing.T, sv checkpointer.Saver) checkpointer.RunDeleter {
		t.Helper()
		d, ok := sv.(checkpointer.RunDeleter)
		if !ok {
			t.Skipf("%T does not implement checkpointer.RunDeleter", sv)
		}
		return d
	}
	// putRun stores a checkpoint of run on (thread, ns) after parent.
	putRun := func(t *testing.T, sv checkpointer.Saver, thread, ns, parent, run string, step int) checkpointer.Config {
		cfg := cfgOf(thread, ns, parent)
		cfg.Metadata = map[string]any{"run_id": run}
		return mustPut(t, sv, cfg, newCheckpoint(step, nil, nil), checkpointer.Metadata{"source": "loop", "step": step}, nil)
	}
	s.runNS(t, []nsCase{
		{"v1_child_keeps_its_pending_sends", func(t *testing.T, sv checkpointer.Saver, ns string) {
			d := deleter(t, sv)
			thread := newThreadID("runs")
			parent, child := v1WithSends(t, sv, thread, ns, "run-a", "run-b")
			if err := d.DeleteForRuns(t.Context(), []string{"run-a"}); err != nil {
				t.Fatal(err)
			}
			checkSendsKept(t, sv, thread, ns, parent, child)
		}},
		{"single_run", func(t *testing.T, sv checkpointer.Saver, ns string) {
			d := deleter(t, sv)
			thread := newThreadID("runs")
			a1 := putRun(t, sv, thread, ns, "", "run-a", 0)
			b1 := putRun(t, sv, thread, ns, a1.CheckpointID, "run-b", 1)
			a2 := putRun(t, sv, thread, ns, b1.CheckpointID, "run-a", 2)
			if err := d.DeleteForRuns(t.Context(), []string{"run-a"}); err != nil {
				t.Fatal(err)
			}
			checkIDs(t, "left", idsOf(listThread(t, sv, thread, ns)), []string{b1.CheckpointID})
			// The latest is recomputed.
			if got := mustGetSome(t, sv, cfgOf(thread, ns, "")); got.Config.CheckpointID != b1.CheckpointID {
				t.Fatalf("latest = %s, want %s (deleted %s)", got.Config.CheckpointID, b1.CheckpointID, a2.CheckpointID)
			}
		}},
		{"multiple_runs_and_others_kept", func(t *testing.T, sv checkpointer.Saver, ns string) {
			d := deleter(t, sv)
			thread := newThreadID("runs")
			a := putRun(t, sv, thread, ns, "", "run-a", 0)
			b := putRun(t, sv, thread, ns, a.CheckpointID, "run-b", 1)
			c := putRun(t, sv, thread, ns, b.CheckpointID, "run-c", 2)
			other := putRun(t, sv, newThreadID("runs"), ns, "", "run-a", 0)
			keep := putRun(t, sv, newThreadID("runs"), ns, "", "run-keep", 0)
			if err := d.DeleteForRuns(t.Context(), []string{"run-a", "run-c"}); err != nil {
				t.Fatal(err)
			}
			checkIDs(t, "left", idsOf(listThread(t, sv, thread, ns)), []string{b.CheckpointID})
			if tp := mustGet(t, sv, other); tp != nil {
				t.Fatalf("run-a checkpoint on another thread survived")
			}
			_ = c
			mustGetSome(t, sv, keep)
		}},
		{"writes_removed", func(t *testing.T, sv checkpointer.Saver, ns string) {
			d := deleter(t, sv)
			thread := newThreadID("runs")
			a := putRun(t, sv, thread, ns, "", "run-a", 0)
			b := putRun(t, sv, thread, ns, a.CheckpointID, "run-b", 1)
			mustPutWrites(t, sv, a, []wr{{"ch", "gone"}}, "task", "")
			mustPutWrites(t, sv, b, []wr{{"ch", "kept"}}, "task", "")
			if err := d.DeleteForRuns(t.Context(), []string{"run-a"}); err != nil {
				t.Fatal(err)
			}
			checkWrites(t, sv, b, []pw{{"task", "ch", "kept"}})
			// Re-creating the deleted checkpoint brings no stale writes.
			cp := newCheckpoint(0, nil, nil)
			cp.ID = a.CheckpointID
			mustPut(t, sv, cfgOf(thread, ns, ""), cp, nil, nil)
			checkWrites(t, sv, a, nil)
		}},
		{"all_namespaces", func(t *testing.T, sv checkpointer.Saver, ns string) {
			d := deleter(t, sv)
			thread := newThreadID("runs")
			putRun(t, sv, thread, ns, "", "run-a", 0)
			putRun(t, sv, thread, "other:10", "", "run-a", 0)
			keep := putRun(t, sv, thread, "other:11", "", "run-b", 0)
			if err := d.DeleteForRuns(t.Context(), []string{"run-a"}); err != nil {
				t.Fatal(err)
			}
			c := cfgOf(thread, "", "")
			checkIDs(t, "left", idsOf(mustList(t, sv, &c, checkpointer.ListOptions{AllNamespaces: true})), []string{keep.CheckpointID})
		}},
		{"empty_and_unknown_are_noops", func(t *testing.T, sv checkpointer.Saver, ns string) {
			d := deleter(t, sv)
			thread := newThreadID("runs")
			keep := putRun(t, sv, thread, ns, "", "run-a", 0)
			if err := d.DeleteForRuns(t.Context(), nil); err != nil {
				t.Fatalf("DeleteForRuns(nil) = %v", err)
			}
			if err := d.DeleteForRuns(t.Context(), []string{"run-unknown"}); err != nil {
				t.Fatalf("DeleteForRuns(unknown) = %v", err)
			}
			mustGetSome(t, sv, keep)
		}},
		{"values_of_survivors_kept", func(t *testing.T, sv checkpointer.Saver, ns string) {
			d := deleter(t, sv)
			thread := newThreadID("runs")
			v := sv.NextVersion("")
			cfg := cfgOf(thread, ns, "")
			cfg.Metadata = map[string]any{"run_id": "run-a"}
			cp1 := newCheckpoint(0, map[string]any{"shared": "from run a"}, map[string]string{"shared": v})
			mustPut(t, sv, cfg, cp1, nil, map[string]string{"shared": v})
			cfg.CheckpointID, cfg.Metadata = cp1.ID, map[string]any{"run_id": "run-b"}
			cp2 := newCheckpoint(1, nil, map[string]string{"shared": v})
			mustPut(t, sv, cfg, cp2, nil, nil)
			if err := d.DeleteForRuns(t.Context(), []string{"run-a"}); err != nil {
				t.Fatal(err)
			}
			w := cloneCheckpoint(cp2)
			w.ChannelValues = map[string]any{"shared": "from run a"}
			checkTuple(t, mustGetSome(t, sv, cfgOf(thread, ns, "")), want{thread: thread, ns: ns, id: cp2.ID, parent: cp1.ID, cp: w})
		}},
	})
}

// testMigration checks the v<4 pending-sends migration of the JS validation
// suite: Send packets a v<4 checkpoint's parent stored as writes to
// ChannelTasks become the child's ChannelTasks value.
func (s *suite) testMigration(t *testing.T) {
	s.runNS(t, []nsCase{
		{"v1_child_gets_parent_sends", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("mig")
			parent := newCheckpoint(0, nil, nil)
			parent.V = 1
			pcfg := mustPut(t, sv, cfgOf(thread, ns, ""), parent, checkpointer.Metadata{"source": "loop", "step": 0}, nil)
			mustPutWrites(t, sv, pcfg, []wr{{checkpointer.ChannelTasks, "send-1"}, {checkpointer.ChannelTasks, "send-2"}}, "task-1", "")
			mustPutWrites(t, sv, pcfg, []wr{{checkpointer.ChannelTasks, "send-3"}, {"other", "not a send"}}, "task-2", "")
			va := sv.NextVersion("")
			child := newCheckpoint(1, map[string]any{"a": "x"}, map[string]string{"a": va})
			child.V = 1
			mustPut(t, sv, pcfg, child, checkpointer.Metadata{"source": "loop", "step": 1}, map[string]string{"a": va})

			got := mustGetSome(t, sv, cfgOf(thread, ns, child.ID))
			if d := diff(Normalize([]any{"send-1", "send-2", "send-3"}), Normalize(got.Checkpoint.ChannelValues[checkpointer.ChannelTasks])); d != "" {
				t.Fatalf("migrated %s: %s", checkpointer.ChannelTasks, d)
			}
			if got.Checkpoint.ChannelVersions[checkpointer.ChannelTasks] == "" {
				t.Fatalf("migrated %s has no version", checkpointer.ChannelTasks)
			}
			if got.Checkpoint.ChannelValues["a"] != "x" {
				t.Fatalf("channel a = %#v, want x", got.Checkpoint.ChannelValues["a"])
			}
			// The same through List.
			c := cfgOf(thread, ns, "")
			listed := mustList(t, sv, &c, checkpointer.ListOptions{Limit: 1})
			if len(listed) != 1 || !Equal([]any{"send-1", "send-2", "send-3"}, listed[0].Checkpoint.ChannelValues[checkpointer.ChannelTasks]) {
				t.Fatalf("List did not migrate pending sends: %+v", listed)
			}
			// The parent has no parent, so nothing to migrate.
			p := mustGetSome(t, sv, pcfg)
			if _, ok := p.Checkpoint.ChannelValues[checkpointer.ChannelTasks]; ok {
				t.Fatalf("parent got %s", checkpointer.ChannelTasks)
			}
			if _, ok := p.Checkpoint.ChannelVersions[checkpointer.ChannelTasks]; ok {
				t.Fatalf("parent got a %s version", checkpointer.ChannelTasks)
			}
		}},
		{"unset_v_is_current", func(t *testing.T, sv checkpointer.Saver, ns string) {
			// A Go caller that leaves V at 0 writes the current format:
			// the child reads back as v4 and never gets its parent's
			// __pregel_tasks writes as pending sends, before or after a
			// prune that keeps only the child.
			thread := newThreadID("mig")
			parent := newCheckpoint(0, nil, nil)
			parent.V = 0
			pcfg := mustPut(t, sv, cfgOf(thread, ns, ""), parent, nil, nil)
			mustPutWrites(t, sv, pcfg, []wr{{checkpointer.ChannelTasks, "send-1"}}, "task-1", "")
			child := newCheckpoint(1, nil, nil)
			child.V = 0
			mustPut(t, sv, pcfg, child, nil, nil)
			c := cfgOf(thread, ns, "")
			for how, tp := range map[string]*checkpointer.Tuple{
				"GetTuple child":  mustGetSome(t, sv, cfgOf(thread, ns, child.ID)),
				"GetTuple parent": mustGetSome(t, sv, pcfg),
				"List":            mustList(t, sv, &c, checkpointer.ListOptions{Limit: 1})[0],
			} {
				if tp.Checkpoint.V != 4 {
					t.Errorf("%s: Checkpoint.V = %d, want 4 (0 is the current format)", how, tp.Checkpoint.V)
				}
				if v, ok := tp.Checkpoint.ChannelValues[checkpointer.ChannelTasks]; ok {
					t.Errorf("%s: a checkpoint put with V unset got its parent's sends: %#v", how, v)
				}
			}
		}},
		{"v4_child_not_migrated", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("mig")
			parent := newCheckpoint(0, nil, nil)
			pcfg := mustPut(t, sv, cfgOf(thread, ns, ""), parent, nil, nil)
			mustPutWrites(t, sv, pcfg, []wr{{checkpointer.ChannelTasks, "send-1"}}, "task-1", "")
			child := newCheckpoint(1, nil, nil)
			mustPut(t, sv, pcfg, child, nil, nil)
			got := mustGetSome(t, sv, cfgOf(thread, ns, child.ID))
			if _, ok := got.Checkpoint.ChannelValues[checkpointer.ChannelTasks]; ok {
				t.Fatalf("v4 checkpoint was migrated")
			}
		}},
		{"v1_without_sends_unchanged", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("mig")
			parent := newCheckpoint(0, nil, nil)
			parent.V = 1
			pcfg := mustPut(t, sv, cfgOf(thread, ns, ""), parent, nil, nil)
			child := newCheckpoint(1, nil, nil)
			child.V = 1
			mustPut(t, sv, pcfg, child, nil, nil)
			got := mustGetSome(t, sv, cfgOf(thread, ns, child.ID))
			if _, ok := got.Checkpoint.ChannelVersions[checkpointer.ChannelTasks]; ok {
				t.Fatalf("v1 checkpoint without sends got a %s version", checkpointer.ChannelTasks)
			}
		}},
	})
}

// v1WithSends stores a v1 checkpoint of parentRun with __pregel_tasks
// writes and its v1 child of childRun, which reads them as its pending
// sends; it returns both ids.
func v1WithSends(t *testing.T, sv checkpointer.Saver, thread, ns, parentRun, childRun string) (parent, child string) {
	t.Helper()
	p := newCheckpoint(0, nil, nil)
	p.V = 1
	pc := cfgOf(thread, ns, "")
	pc.Metadata = map[string]any{"run_id": parentRun}
	pcfg := mustPut(t, sv, pc, p, checkpointer.Metadata{"source": "loop", "step": 0}, nil)
	mustPutWrites(t, sv, pcfg, []wr{{checkpointer.ChannelTasks, "send-1"}, {"other", "dropped"}}, "task-1", "")
	c := newCheckpoint(1, nil, nil)
	c.V = 1
	cc := pcfg
	cc.Metadata = map[string]any{"run_id": childRun}
	mustPut(t, sv, cc, c, checkpointer.Metadata{"source": "loop", "step": 1}, nil)
	return p.ID, c.ID
}

// checkSendsKept: the parent is gone and its child still reads the sends.
func checkSendsKept(t *testing.T, sv checkpointer.Saver, thread, ns, parent, child string) {
	t.Helper()
	if tp := mustGet(t, sv, cfgOf(thread, ns, parent)); tp != nil {
		t.Fatalf("parent %s survived", parent)
	}
	got := mustGetSome(t, sv, cfgOf(thread, ns, child))
	if !Equal([]any{"send-1"}, got.Checkpoint.ChannelValues[checkpointer.ChannelTasks]) {
		t.Fatalf("the v1 child lost its pending sends: %v", got.Checkpoint.ChannelValues)
	}
}
