package checkpointertest

import (
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

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
		t.Run(name, func(t *testing.T) { s.testBadText(t, bad, checkpointer.ErrInvalidID, true) })
	}
	t.Run("too_long", func(t *testing.T) {
		// One byte over, counted in bytes: the last character is a
		// two-byte one, so the id is fewer characters than the limit.
		// Writes are refused; reads and deletes find nothing, as they
		// would for any absent thread (on SQLite they still reach a
		// thread an earlier version stored: see its legacy-ids test).
		bad := longID(1, checkpointer.MaxIDBytes-1) + "é"
		s.testBadText(t, bad, checkpointer.ErrIDTooLong, false)
		s.testBadText(t, bad, checkpointer.ErrInvalidID, false)
	})
	t.Run("at_the_limit", s.testIDsAtLimit)
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
// checks each write (Put, PutWrites, CopyThread's destination) is refused
// with want (ErrInvalidID, ErrIDTooLong) and writes nothing. Reads and
// deletes (GetTuple, List, DeleteThread, DeleteCheckpoint, Prune,
// CopyThread's source, DeleteForRuns) are refused with want too when
// readsRefused (bad text), and otherwise (a too-long id, which only writes
// refuse) succeed and find nothing.
func (s *suite) testBadText(t *testing.T, bad string, want error, readsRefused bool) {
	sv := s.newSaver(t)
	good := putChain(t, sv, newThreadID("good"), "", 1)[0].cfg
	before := len(mustList(t, sv, nil, checkpointer.ListOptions{}))
	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Errorf("%s = %v, want %v", what, err, want)
		}
	}
	// lookup checks a read or delete: refused like a write, or accepted.
	lookup := func(what string, err error) {
		t.Helper()
		if readsRefused {
			refused(what, err)
		} else if err != nil {
			t.Errorf("%s = %v, want nil (only writes bound the length)", what, err)
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

	for what, cfg := range map[string]checkpointer.Config{
		"thread id":     cfgOf(good.ThreadID+bad, "", ""),
		"namespace":     cfgOf(good.ThreadID, bad, ""),
		"checkpoint id": cfgOf(good.ThreadID, "", bad),
	} {
		tp, err := sv.GetTuple(t.Context(), cfg)
		lookup("GetTuple("+what+")", err)
		if tp != nil {
			t.Errorf("GetTuple(%s) found checkpoint %s", what, tp.Config.CheckpointID)
		}
	}

	listErr := func(cfg *checkpointer.Config, opt checkpointer.ListOptions) error {
		for tp, err := range sv.List(t.Context(), cfg, opt) {
			if err != nil {
				return err
			}
			if cfg != nil {
				return fmt.Errorf("found checkpoint %s", tp.Config.CheckpointID)
			}
		}
		return nil
	}
	lookup("List(thread id)", listErr(&checkpointer.Config{ThreadID: good.ThreadID + bad}, checkpointer.ListOptions{}))
	lookup("List(namespace)", listErr(&checkpointer.Config{ThreadID: good.ThreadID, CheckpointNS: bad}, checkpointer.ListOptions{}))
	lookup("List(checkpoint id)", listErr(&checkpointer.Config{ThreadID: good.ThreadID, CheckpointID: bad}, checkpointer.ListOptions{}))
	lookup("List(before)", listErr(nil, checkpointer.ListOptions{Before: &checkpointer.Config{CheckpointID: bad}}))

	lookup("DeleteThread", sv.DeleteThread(t.Context(), good.ThreadID+bad))
	if d, ok := sv.(checkpointer.CheckpointDeleter); ok {
		lookup("DeleteCheckpoint(thread id)", d.DeleteCheckpoint(t.Context(), cfgOf(good.ThreadID+bad, "", good.CheckpointID)))
		lookup("DeleteCheckpoint(namespace)", d.DeleteCheckpoint(t.Context(), cfgOf(good.ThreadID, bad, good.CheckpointID)))
		lookup("DeleteCheckpoint(checkpoint id)", d.DeleteCheckpoint(t.Context(), cfgOf(good.ThreadID, "", bad)))
	}
	if p, ok := sv.(checkpointer.Pruner); ok {
		lookup("Prune", p.Prune(t.Context(), []string{bad}, checkpointer.PruneDelete))
		lookup("Prune(keep latest)", p.Prune(t.Context(), []string{bad}, checkpointer.PruneKeepLatest))
	}
	if c, ok := sv.(checkpointer.Copier); ok {
		dst := newThreadID("dst")
		if err := c.CopyThread(t.Context(), bad, dst); readsRefused || !errors.Is(err, checkpointer.ErrNotFound) {
			lookup("CopyThread(src)", err) // copying an absent thread may be ErrNotFound
		}
		if got := listThread(t, sv, dst, ""); len(got) != 0 {
			t.Errorf("CopyThread(src) made %d checkpoints", len(got))
		}
		refused("CopyThread(dst)", c.CopyThread(t.Context(), good.ThreadID, bad))
	}
	if d, ok := sv.(checkpointer.RunDeleter); ok {
		// A run id lives in metadata, not in an index: only its text is
		// checked, not its length.
		lookup("DeleteForRuns", d.DeleteForRuns(t.Context(), []string{bad}))
	}

	if after := len(mustList(t, sv, nil, checkpointer.ListOptions{})); after != before {
		t.Fatalf("refused calls changed the stored checkpoints: %d before, %d after", before, after)
	}
	if got := mustGetSome(t, sv, good); len(got.PendingWrites) != 0 {
		t.Fatalf("refused PutWrites stored %s", showWrites(got.PendingWrites))
	}
}

// longID returns n bytes of valid UTF-8 that do not compress (seeded by
// seed): a mix of one- to four-byte characters drawn at random, so that a
// backend storing it in an index (PostgreSQL compresses a long index entry
// when it can) meets its worst case, and a byte count that differs from
// the character count.
func longID(seed uint64, n int) string {
	r := mrand.New(mrand.NewPCG(seed, uint64(n)))
	ranges := [][2]rune{{'0', 'z'}, {0xC0, 0x24F}, {0x4E00, 0x9FFF}, {0x1F300, 0x1F64F}}
	var b strings.Builder
	for b.Len() < n {
		rg := ranges[r.IntN(len(ranges))]
		c := rg[0] + rune(r.IntN(int(rg[1]-rg[0]+1)))
		if b.Len()+utf8.RuneLen(c) > n {
			c = rune('a' + r.IntN(26))
		}
		if c == '.' || c == '|' || c == ':' {
			c = 'x'
		}
		b.WriteRune(c)
	}
	return b.String()
}

// testIDsAtLimit writes a thread whose every identifier is MaxIDBytes
// bytes long — thread id, namespace, checkpoint id, parent id, channel
// names, versions, node names, task id, task path — so that the widest
// index row of a backend (PostgreSQL's checkpoint_writes and
// checkpoint_blobs keys hold four of them, incompressible here) is met at
// its worst, and reads it back by every entry point.
func (s *suite) testIDsAtLimit(t *testing.T) {
	sv := s.newSaver(t)
	const n = checkpointer.MaxIDBytes
	thread, ns := longID(10, n), longID(11, n)
	parentID, id := longID(12, n), longID(13, n)
	if parentID > id { // the latest checkpoint is the greatest id
		parentID, id = id, parentID
	}
	ch, node, task, path := longID(14, n), longID(15, n), longID(16, n), longID(17, n)
	v1, v2 := longID(18, n), longID(19, n)
	for _, x := range []string{thread, ns, parentID, id, ch, node, task, path, v1, v2} {
		if len(x) != n || !utf8.ValidString(x) {
			t.Fatalf("longID made %d bytes, want %d of valid UTF-8", len(x), n)
		}
	}
	cp := newCheckpoint(0, map[string]any{ch: "first"}, map[string]string{ch: v1})
	cp.ID = parentID
	cfg := mustPut(t, sv, cfgOf(thread, ns, ""), cp, nil, map[string]string{ch: v1})
	cp2 := newCheckpoint(1, map[string]any{ch: "second"}, map[string]string{ch: v2})
	cp2.ID = id
	cp2.VersionsSeen = map[string]map[string]string{node: {ch: v1}}
	cfg = mustPut(t, sv, cfg, cp2, nil, map[string]string{ch: v2})
	if cfg.ThreadID != thread || cfg.CheckpointNS != ns || cfg.CheckpointID != id {
		t.Fatalf("Put returned another config than the one written")
	}
	mustPutWrites(t, sv, cfg, []wr{{ch, "w"}}, task, path)

	got := mustGetSome(t, sv, cfgOf(thread, ns, ""))
	if got.Config.CheckpointID != id || got.ParentConfig == nil || got.ParentConfig.CheckpointID != parentID {
		t.Fatalf("latest checkpoint is not the long-id child of the long-id parent")
	}
	if got.Checkpoint.ChannelValues[ch] != "second" || got.Checkpoint.ChannelVersions[ch] != v2 || got.Checkpoint.VersionsSeen[node][ch] != v1 {
		t.Fatalf("long channel name, version or node name not given back: values %v", got.Checkpoint.ChannelValues)
	}
	if len(got.PendingWrites) != 1 || got.PendingWrites[0].TaskID != task || got.PendingWrites[0].Channel != ch {
		t.Fatalf("pending writes = %s, want one by the long task on the long channel", showWrites(got.PendingWrites))
	}
	if old := mustGetSome(t, sv, cfgOf(thread, ns, parentID)); old.Checkpoint.ChannelValues[ch] != "first" {
		t.Fatalf("the long-id parent reads back %v", old.Checkpoint.ChannelValues)
	}
	if l := mustList(t, sv, &checkpointer.Config{ThreadID: thread, CheckpointNS: ns}, checkpointer.ListOptions{Before: &checkpointer.Config{CheckpointID: id}}); len(l) != 1 || l[0].Config.CheckpointID != parentID {
		t.Fatalf("List(before the long id) gave %d checkpoints, want its parent", len(l))
	}
	if c, ok := sv.(checkpointer.Copier); ok {
		dst := longID(20, n)
		if err := c.CopyThread(t.Context(), thread, dst); err != nil {
			t.Fatalf("CopyThread to a %d-byte thread id: %v", n, err)
		}
		if l := listThread(t, sv, dst, ns); len(l) != 2 {
			t.Fatalf("the copy has %d checkpoints, want 2", len(l))
		}
	}
	if err := sv.DeleteThread(t.Context(), thread); err != nil {
		t.Fatalf("DeleteThread(%d-byte id): %v", n, err)
	}
	if l := listThread(t, sv, thread, ns); len(l) != 0 {
		t.Fatalf("after DeleteThread the long thread has %d checkpoints", len(l))
	}
}
