package checkpointertest

import (
	"errors"
	"testing"

	"github.com/memvault/memvault/checkpointer"
)

// badTexts are identifiers no backend may store: PostgreSQL's text type
// cannot hold them, so accepting them anywhere would make a thread that
// cannot move to another backend.
var badTexts = map[string]string{
	"nul":          "a\x00b",
	"invalid_utf8": "\xff\xfeab",
}

// goodNonASCII is valid UTF-8 every backend must accept and give back.
const goodNonASCII = "ünï-東京-🙂"

// testIDs holds every entry point to the id rules: an empty thread id
// never widens an operation to every thread, and NUL bytes or invalid UTF-8
// in any coordinate are refused with checkpointer.ErrInvalidID before
// anything is written, on every backend alike.
func (s *suite) testIDs(t *testing.T) {
	t.Run("list_empty_thread_id", func(t *testing.T) {
		sv := s.newSaver(t)
		putChain(t, sv, newThreadID("other"), "", 2)
		n := 0
		var gotErr error
		for tp, err := range sv.List(t.Context(), &checkpointer.Config{}, checkpointer.ListOptions{}) {
			if err != nil {
				gotErr = err
				break
			}
			n++
			t.Logf("listed %s/%s", tp.Config.ThreadID, tp.Config.CheckpointID)
		}
		if n != 0 || !errors.Is(gotErr, checkpointer.ErrMissingThreadID) {
			t.Fatalf("List(&Config{ThreadID: \"\"}) yielded %d tuples and %v; want none and ErrMissingThreadID (only a nil config lists every thread)", n, gotErr)
		}
		for _, err := range sv.List(t.Context(), &checkpointer.Config{}, checkpointer.ListOptions{AllNamespaces: true}) {
			if !errors.Is(err, checkpointer.ErrMissingThreadID) {
				t.Fatalf("List(all namespaces, no thread) = %v, want ErrMissingThreadID", err)
			}
			break
		}
		if got := len(mustList(t, sv, nil, checkpointer.ListOptions{})); got != 2 {
			t.Fatalf("List(nil) = %d tuples, want the 2 stored (nil lists every thread)", got)
		}
	})
	t.Run("prune_and_copy_empty_thread_id", func(t *testing.T) {
		sv := s.newSaver(t)
		keep := putChain(t, sv, newThreadID("keep"), "", 2)
		if p, ok := sv.(checkpointer.Pruner); ok {
			for _, st := range []checkpointer.PruneStrategy{checkpointer.PruneKeepLatest, checkpointer.PruneDelete} {
				if err := p.Prune(t.Context(), []string{keep[0].cfg.ThreadID, ""}, st); !errors.Is(err, checkpointer.ErrMissingThreadID) {
					t.Fatalf("Prune(strategy %d, with \"\") = %v, want ErrMissingThreadID", st, err)
				}
			}
		}
		if c, ok := sv.(checkpointer.Copier); ok {
			if err := c.CopyThread(t.Context(), keep[0].cfg.ThreadID, ""); !errors.Is(err, checkpointer.ErrMissingThreadID) {
				t.Fatalf("CopyThread(t, \"\") = %v, want ErrMissingThreadID", err)
			}
		}
		if got := len(listThread(t, sv, keep[0].cfg.ThreadID, "")); got != 2 {
			t.Fatalf("after refused Prune/CopyThread the thread has %d checkpoints, want 2", got)
		}
	})
	for name, bad := range badTexts {
		t.Run(name, func(t *testing.T) { s.testBadText(t, bad) })
	}
	t.Run("non_ascii_round_trip", func(t *testing.T) {
		sv := s.newSaver(t)
		thread := newThreadID(goodNonASCII)
		ns := goodNonASCII + ":task"
		v := sv.NextVersion("")
		cp := newCheckpoint(0, map[string]any{goodNonASCII: "value"}, map[string]string{goodNonASCII: v})
		cfg := mustPut(t, sv, cfgOf(thread, ns, ""), cp, nil, map[string]string{goodNonASCII: v})
		mustPutWrites(t, sv, cfg, []wr{{goodNonASCII, "w"}}, goodNonASCII, goodNonASCII)
		got := mustGetSome(t, sv, cfgOf(thread, ns, ""))
		if got.Config.ThreadID != thread || got.Config.CheckpointNS != ns {
			t.Fatalf("read back thread %q ns %q, want %q %q", got.Config.ThreadID, got.Config.CheckpointNS, thread, ns)
		}
		if got.Checkpoint.ChannelValues[goodNonASCII] != "value" {
			t.Fatalf("channel %q = %v, want \"value\"", goodNonASCII, got.Checkpoint.ChannelValues[goodNonASCII])
		}
		if len(got.PendingWrites) != 1 || got.PendingWrites[0].TaskID != goodNonASCII || got.PendingWrites[0].Channel != goodNonASCII {
			t.Fatalf("pending writes = %s, want one by task %q on channel %q", showWrites(got.PendingWrites), goodNonASCII, goodNonASCII)
		}
		if ids := idsOf(mustList(t, sv, &checkpointer.Config{ThreadID: thread, CheckpointNS: ns}, checkpointer.ListOptions{})); len(ids) != 1 {
			t.Fatalf("List of the non-ASCII thread = %v, want its one checkpoint", ids)
		}
	})
}

// testBadText offers bad in every coordinate of every entry point and
// checks each is refused with ErrInvalidID and writes nothing.
func (s *suite) testBadText(t *testing.T, bad string) {
	sv := s.newSaver(t)
	good := putChain(t, sv, newThreadID("good"), "", 1)[0].cfg
	before := len(mustList(t, sv, nil, checkpointer.ListOptions{}))
	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, checkpointer.ErrInvalidID) {
			t.Errorf("%s = %v, want ErrInvalidID", what, err)
		}
	}
	put := func(cfg checkpointer.Config, mutate func(cp *checkpointer.Checkpoint, nv map[string]string)) error {
		v := sv.NextVersion("")
		cp := newCheckpoint(0, map[string]any{"ch": 1}, map[string]string{"ch": v})
		nv := map[string]string{"ch": v}
		if mutate != nil {
			mutate(cp, nv)
		}
		_, err := sv.Put(t.Context(), cfg, cp, nil, nv)
		return err
	}
	fresh := newThreadID("bad")
	refused("Put(thread id)", put(cfgOf(fresh+bad, "", ""), nil))
	refused("Put(namespace)", put(cfgOf(fresh, bad, ""), nil))
	refused("Put(parent checkpoint id)", put(cfgOf(fresh, "", bad), nil))
	refused("Put(checkpoint id)", put(cfgOf(fresh, "", ""), func(cp *checkpointer.Checkpoint, _ map[string]string) { cp.ID = bad }))
	refused("Put(channel name)", put(cfgOf(fresh, "", ""), func(cp *checkpointer.Checkpoint, nv map[string]string) {
		cp.ChannelValues[bad] = 1
		cp.ChannelVersions[bad] = nv["ch"]
		nv[bad] = nv["ch"]
	}))
	refused("Put(channel version)", put(cfgOf(fresh, "", ""), func(cp *checkpointer.Checkpoint, nv map[string]string) {
		cp.ChannelVersions["ch"] = bad
		nv["ch"] = bad
	}))
	refused("Put(versions_seen node)", put(cfgOf(fresh, "", ""), func(cp *checkpointer.Checkpoint, nv map[string]string) {
		cp.VersionsSeen = map[string]map[string]string{bad: {"ch": nv["ch"]}}
	}))

	w := toWrites([]wr{{"ch", 1}})
	refused("PutWrites(thread id)", sv.PutWrites(t.Context(), cfgOf(good.ThreadID+bad, "", good.CheckpointID), w, "task", ""))
	refused("PutWrites(namespace)", sv.PutWrites(t.Context(), cfgOf(good.ThreadID, bad, good.CheckpointID), w, "task", ""))
	refused("PutWrites(checkpoint id)", sv.PutWrites(t.Context(), cfgOf(good.ThreadID, "", bad), w, "task", ""))
	refused("PutWrites(task id)", sv.PutWrites(t.Context(), good, w, bad, ""))
	refused("PutWrites(task path)", sv.PutWrites(t.Context(), good, w, "task", bad))
	refused("PutWrites(channel)", sv.PutWrites(t.Context(), good, toWrites([]wr{{"ok", 1}, {bad, 2}}), "task", ""))

	_, err := sv.GetTuple(t.Context(), cfgOf(good.ThreadID+bad, "", ""))
	refused("GetTuple(thread id)", err)
	_, err = sv.GetTuple(t.Context(), cfgOf(good.ThreadID, bad, ""))
	refused("GetTuple(namespace)", err)
	_, err = sv.GetTuple(t.Context(), cfgOf(good.ThreadID, "", bad))
	refused("GetTuple(checkpoint id)", err)

	listErr := func(cfg *checkpointer.Config, opt checkpointer.ListOptions) error {
		for _, err := range sv.List(t.Context(), cfg, opt) {
			if err != nil {
				return err
			}
		}
		return nil
	}
	refused("List(thread id)", listErr(&checkpointer.Config{ThreadID: good.ThreadID + bad}, checkpointer.ListOptions{}))
	refused("List(namespace)", listErr(&checkpointer.Config{ThreadID: good.ThreadID, CheckpointNS: bad}, checkpointer.ListOptions{}))
	refused("List(checkpoint id)", listErr(&checkpointer.Config{ThreadID: good.ThreadID, CheckpointID: bad}, checkpointer.ListOptions{}))
	refused("List(before)", listErr(nil, checkpointer.ListOptions{Before: &checkpointer.Config{CheckpointID: bad}}))

	refused("DeleteThread", sv.DeleteThread(t.Context(), good.ThreadID+bad))
	if p, ok := sv.(checkpointer.Pruner); ok {
		refused("Prune", p.Prune(t.Context(), []string{good.ThreadID, bad}, checkpointer.PruneDelete))
	}
	if c, ok := sv.(checkpointer.Copier); ok {
		refused("CopyThread(src)", c.CopyThread(t.Context(), bad, newThreadID("dst")))
		refused("CopyThread(dst)", c.CopyThread(t.Context(), good.ThreadID, bad))
	}
	if d, ok := sv.(checkpointer.RunDeleter); ok {
		refused("DeleteForRuns", d.DeleteForRuns(t.Context(), []string{bad}))
	}

	if after := len(mustList(t, sv, nil, checkpointer.ListOptions{})); after != before {
		t.Fatalf("refused calls changed the stored checkpoints: %d before, %d after", before, after)
	}
	if got := mustGetSome(t, sv, good); len(got.PendingWrites) != 0 {
		t.Fatalf("refused PutWrites stored %s", showWrites(got.PendingWrites))
	}
}
