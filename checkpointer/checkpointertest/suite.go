package checkpointertest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
)

// Run runs the whole conformance suite. newSaver is called for every test
// case (and once for each shared fixture) and must return a saver over empty
// storage. Cases for optional capabilities skip, saying why, when the saver
// does not implement them.
func Run(t *testing.T, newSaver func(t *testing.T) checkpointer.Saver) {
	s := &suite{newSaver: newSaver}
	t.Run("Put", s.testPut)
	t.Run("PutWrites", s.testPutWrites)
	t.Run("GetTuple", s.testGetTuple)
	t.Run("List", s.testList)
	t.Run("ListMatrix", s.testListMatrix)
	t.Run("ListFilter", s.testListFilter)
	t.Run("DeleteThread", s.testDeleteThread)
	t.Run("Prune", s.testPrune)
	t.Run("CopyThread", s.testCopyThread)
	t.Run("DeleteForRuns", s.testDeleteForRuns)
	t.Run("DeleteCheckpoint", s.testDeleteCheckpoint)
	t.Run("PendingSendsMigration", s.testMigration)
	t.Run("Values", s.testValues)
	t.Run("Fidelity", s.testFidelity)
	t.Run("Metacharacters", s.testMetachars)
	t.Run("BadInput", s.testBadInput)
	t.Run("EmptyVersion", s.testEmptyVersion)
	t.Run("IDs", s.testIDs)
	t.Run("Concurrency", s.testConcurrency)
	t.Run("Streaming", s.testStreaming)
	t.Run("Context", s.testContext)
	t.Run("NextVersion", s.testNextVersion)
	t.Run("ListThreads", s.testListThreads)
	t.Run("RowThreadIDs", s.testRowThreadIDs)
	t.Run("ImportThread", s.testImportThread)
	t.Run("Sweep", s.testSweep)
	t.Run("Resume", s.testResume)
}

type suite struct {
	newSaver func(t *testing.T) checkpointer.Saver
}

// nsCase is a case run once in the root namespace and once in a child one.
type nsCase struct {
	name string
	fn   func(t *testing.T, sv checkpointer.Saver, ns string)
}

// childNS is the child namespace of the namespace variants (LangGraph's
// "<node>:<task id>" form).
const childNS = "child:abc"

func (s *suite) runNS(t *testing.T, cases []nsCase) {
	for _, ns := range []string{"", childNS} {
		name := "root"
		if ns != "" {
			name = "child"
		}
		t.Run(name, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					c.fn(t, s.newSaver(t), ns)
				})
			}
		})
	}
}

// newThreadID returns a thread id no other case uses.
func newThreadID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

// copyIDs returns a fresh source thread and a destination for its copy.
// Both name the same subject under the suite's per-subject keys (thread
// separator "-": "src-<hex>" and "src-<hex>-copy"), since a copy to
// another subject's thread is refused (keys.ErrSubjectMismatch; see
// RunErasure).
func copyIDs() (src, dst string) {
	src = newThreadID("src")
	return src, src + "-copy"
}

// now returns the current time as backends keep it: UTC, microseconds.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// newCheckpoint returns a v4 checkpoint for step with a fresh id.
func newCheckpoint(step int, values map[string]any, versions map[string]string) *checkpointer.Checkpoint {
	if values == nil {
		values = map[string]any{}
	}
	if versions == nil {
		versions = map[string]string{}
	}
	return &checkpointer.Checkpoint{
		V:               4,
		ID:              checkpointer.NewID(step),
		TS:              now(),
		ChannelValues:   values,
		ChannelVersions: versions,
		VersionsSeen:    map[string]map[string]string{},
	}
}

func cfgOf(thread, ns, id string) checkpointer.Config {
	return checkpointer.Config{ThreadID: thread, CheckpointNS: ns, CheckpointID: id}
}

func mustPut(t testing.TB, sv checkpointer.Saver, cfg checkpointer.Config, cp *checkpointer.Checkpoint, md checkpointer.Metadata, nv map[string]string) checkpointer.Config {
	t.Helper()
	out, err := sv.Put(t.Context(), cfg, cp, md, nv)
	if err != nil {
		t.Fatalf("Put(%+v, %s): %v", cfg, cp.ID, err)
	}
	return out
}

func mustPutWrites(t testing.TB, sv checkpointer.Saver, cfg checkpointer.Config, writes []wr, task, path string) {
	t.Helper()
	if err := sv.PutWrites(t.Context(), cfg, toWrites(writes), task, path); err != nil {
		t.Fatalf("PutWrites(%+v, %s): %v", cfg, task, err)
	}
}

func mustGet(t testing.TB, sv checkpointer.Saver, cfg checkpointer.Config) *checkpointer.Tuple {
	t.Helper()
	tp, err := sv.GetTuple(t.Context(), cfg)
	if err != nil {
		t.Fatalf("GetTuple(%+v): %v", cfg, err)
	}
	return tp
}

func mustGetSome(t testing.TB, sv checkpointer.Saver, cfg checkpointer.Config) *checkpointer.Tuple {
	t.Helper()
	tp := mustGet(t, sv, cfg)
	if tp == nil {
		t.Fatalf("GetTuple(%+v) = nil, want a tuple", cfg)
	}
	return tp
}

func mustList(t testing.TB, sv checkpointer.Saver, cfg *checkpointer.Config, opt checkpointer.ListOptions) []*checkpointer.Tuple {
	t.Helper()
	var out []*checkpointer.Tuple
	for tp, err := range sv.List(t.Context(), cfg, opt) {
		if err != nil {
			t.Fatalf("List(%+v, %+v): %v", cfg, opt, err)
		}
		if tp == nil {
			t.Fatalf("List(%+v, %+v) yielded a nil tuple", cfg, opt)
		}
		out = append(out, tp)
	}
	return out
}

func listThread(t testing.TB, sv checkpointer.Saver, thread, ns string) []*checkpointer.Tuple {
	t.Helper()
	c := cfgOf(thread, ns, "")
	return mustList(t, sv, &c, checkpointer.ListOptions{})
}

func idsOf(tps []*checkpointer.Tuple) []string {
	out := make([]string, len(tps))
	for i, tp := range tps {
		out[i] = tp.Config.CheckpointID
	}
	return out
}

func checkIDs(t testing.TB, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: got ids %v, want %v", what, got, want)
	}
}

// chainStep is one checkpoint of a fixture chain, with what reading it back
// must give.
type chainStep struct {
	cfg  checkpointer.Config // as returned by Put
	want want
}

// putChain stores n checkpoints on (thread, ns), each the parent of the
// next. Checkpoint i writes channel "counter" = i and, at i == 0, channel
// "base"; its metadata is {source: input|loop, step: i-1, i: i}.
func putChain(t testing.TB, sv checkpointer.Saver, thread, ns string, n int) []chainStep {
	t.Helper()
	return putChainIDs(t, sv, thread, ns, n, nil)
}

// putChainIDs is putChain with checkpoint i's id given by id(i) (nil:
// checkpointer.NewID).
func putChainIDs(t testing.TB, sv checkpointer.Saver, thread, ns string, n int, id func(i int) string) []chainStep {
	t.Helper()
	var out []chainStep
	parent := ""
	versions := map[string]string{}
	values := map[string]any{}
	for i := range n {
		nv := map[string]string{"counter": sv.NextVersion(versions["counter"])}
		vals := map[string]any{"counter": int64(i)}
		if i == 0 {
			nv["base"] = sv.NextVersion("")
			vals["base"] = "base value"
		}
		maps.Copy(versions, nv)
		maps.Copy(values, vals)
		cp := newCheckpoint(i-1, vals, maps.Clone(versions))
		if id != nil {
			cp.ID = id(i)
		}
		cp.VersionsSeen = map[string]map[string]string{"node": {"counter": versions["counter"]}}
		src := "loop"
		if i == 0 {
			src = "input"
		}
		md := checkpointer.Metadata{"source": src, "step": i - 1, "i": i}
		cfg := mustPut(t, sv, cfgOf(thread, ns, parent), cp, md, nv)
		wcp := *cp
		wcp.ChannelValues = maps.Clone(values)
		out = append(out, chainStep{cfg: cfg, want: want{
			thread: thread, ns: ns, id: cp.ID, parent: parent, cp: &wcp,
			md: map[string]any{"source": src, "step": i - 1, "i": i},
		}})
		parent = cp.ID
	}
	return out
}

// want is what a tuple read back must hold.
type want struct {
	thread, ns, id, parent string
	cp                     *checkpointer.Checkpoint // nil: not checked
	md                     map[string]any           // nil: not checked
	writes                 []pw
	skipWrites             bool
}

func checkTuple(t testing.TB, got *checkpointer.Tuple, w want) {
	t.Helper()
	if err := tupleDiff(got, w); err != "" {
		t.Fatal(err)
	}
}

func tupleDiff(got *checkpointer.Tuple, w want) string {
	if got == nil {
		return fmt.Sprintf("tuple %s: got nil", w.id)
	}
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	wantCfg := cfgOf(w.thread, w.ns, w.id)
	if c := got.Config; c.ThreadID != wantCfg.ThreadID || c.CheckpointNS != wantCfg.CheckpointNS || c.CheckpointID != wantCfg.CheckpointID {
		add("config = %+v, want %+v", c, wantCfg)
	}
	if w.parent == "" {
		if got.ParentConfig != nil {
			add("parent config = %+v, want nil", *got.ParentConfig)
		}
	} else if p := got.ParentConfig; p == nil || p.ThreadID != w.thread || p.CheckpointNS != w.ns || p.CheckpointID != w.parent {
		add("parent config = %+v, want %+v", p, cfgOf(w.thread, w.ns, w.parent))
	}
	if got.Checkpoint == nil {
		add("nil checkpoint")
	} else {
		if got.Checkpoint.ID != w.id {
			add("checkpoint id = %q, want %q", got.Checkpoint.ID, w.id)
		}
		if w.cp != nil {
			errs = append(errs, checkpointDiff(got.Checkpoint, w.cp)...)
		}
	}
	if w.md != nil {
		if d := diff(Normalize(w.md), Normalize(map[string]any(got.Metadata))); d != "" {
			add("metadata: %s", d)
		}
	}
	if !w.skipWrites {
		if d := writesDiff(got.PendingWrites, w.writes); d != "" {
			add("pending writes: %s", d)
		}
	}
	if len(errs) == 0 {
		return ""
	}
	return fmt.Sprintf("tuple %s/%q/%s:\n\t%s", w.thread, w.ns, w.id, strings.Join(errs, "\n\t"))
}

func checkpointDiff(got, w *checkpointer.Checkpoint) []string {
	var errs []string
	if got.V != w.V {
		errs = append(errs, fmt.Sprintf("v = %d, want %d", got.V, w.V))
	}
	if !got.TS.Equal(w.TS) {
		errs = append(errs, fmt.Sprintf("ts = %v, want %v", got.TS, w.TS))
	}
	if d := diff(Normalize(w.ChannelValues), Normalize(nonNilMap(got.ChannelValues))); d != "" {
		errs = append(errs, "channel_values: "+d)
	}
	if !maps.Equal(got.ChannelVersions, w.ChannelVersions) {
		errs = append(errs, fmt.Sprintf("channel_versions = %v, want %v", got.ChannelVersions, w.ChannelVersions))
	}
	if !seenEqual(got.VersionsSeen, w.VersionsSeen) {
		errs = append(errs, fmt.Sprintf("versions_seen = %v, want %v", got.VersionsSeen, w.VersionsSeen))
	}
	if !slices.Equal(got.UpdatedChannels, w.UpdatedChannels) {
		errs = append(errs, fmt.Sprintf("updated_channels = %v, want %v", got.UpdatedChannels, w.UpdatedChannels))
	}
	return errs
}

func nonNilMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func seenEqual(a, b map[string]map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, av := range a {
		bv, ok := b[k]
		if !ok || !maps.Equal(av, bv) {
			return false
		}
	}
	return true
}

func writesDiff(got []checkpointer.PendingWrite, want []pw) string {
	if len(got) != len(want) {
		ws := make([]checkpointer.PendingWrite, len(want))
		for i, w := range want {
			ws[i] = checkpointer.PendingWrite{TaskID: w.task, Channel: w.ch, Value: w.v}
		}
		return fmt.Sprintf("got %d writes %s, want %d %s", len(got), showWrites(got), len(want), showWrites(ws))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.TaskID != w.task || g.Channel != w.ch {
			return fmt.Sprintf("write %d = (%s, %s), want (%s, %s); all: %s", i, g.TaskID, g.Channel, w.task, w.ch, showWrites(got))
		}
		if d := diff(Normalize(w.v), Normalize(g.Value)); d != "" {
			return fmt.Sprintf("write %d (%s, %s) value: %s", i, w.task, w.ch, d)
		}
	}
	return ""
}

func showWrites(ws []checkpointer.PendingWrite) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = fmt.Sprintf("(%s, %s, %s)", w.TaskID, w.Channel, show(w.Value))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// cloneCheckpoint deep-copies a checkpoint whose values are plain JSON-like
// data, so a test can tell whether Put modified its argument.
func cloneCheckpoint(cp *checkpointer.Checkpoint) *checkpointer.Checkpoint {
	c := *cp
	c.ChannelValues = deepCopy(cp.ChannelValues).(map[string]any)
	c.ChannelVersions = maps.Clone(cp.ChannelVersions)
	c.VersionsSeen = map[string]map[string]string{}
	for k, v := range cp.VersionsSeen {
		c.VersionsSeen[k] = maps.Clone(v)
	}
	c.UpdatedChannels = slices.Clone(cp.UpdatedChannels)
	return &c
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case checkpointer.Metadata:
		return checkpointer.Metadata(deepCopy(map[string]any(x)).(map[string]any))
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = deepCopy(e)
		}
		return s
	case []byte:
		return slices.Clone(x)
	}
	return v
}
