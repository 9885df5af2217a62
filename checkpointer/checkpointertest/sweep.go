package checkpointertest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
)

// oldID returns a UUIDv6 checkpoint id of time at (for step), as NewID
// would have made it then.
func oldID(at time.Time, step int) string {
	var node [6]byte
	_, _ = rand.Read(node[:])
	return checkpointer.IDFloor(at)[:19] + fmt.Sprintf("%04x", 0x8000|uint16(step)&0x3FFF) + "-" + hex.EncodeToString(node[:])
}

// agedIDs returns an id function for putChainIDs: checkpoint i is made
// age ago plus i milliseconds, so the chain keeps its order.
func agedIDs(age time.Duration) func(int) string {
	base := time.Now().Add(-age)
	return func(i int) string { return oldID(base.Add(time.Duration(i)*time.Millisecond), i-1) }
}

// sweeper returns sv's checkpointer.Sweeper, skipping when it has none.
func sweeper(t *testing.T, sv checkpointer.Saver) checkpointer.Sweeper {
	t.Helper()
	sw, ok := sv.(checkpointer.Sweeper)
	if !ok {
		t.Skipf("%T does not implement checkpointer.Sweeper", sv)
	}
	return sw
}

func mustSweep(t *testing.T, sw checkpointer.Sweeper, p checkpointer.RetentionPolicy, opt checkpointer.SweepOptions) checkpointer.SweepReport {
	t.Helper()
	rep, err := sw.Sweep(t.Context(), p, opt)
	if err != nil {
		t.Fatalf("Sweep(%v, %+v): %v", p, opt, err)
	}
	return rep
}

// counts is what a report says was removed, for comparisons.
func counts(r checkpointer.SweepReport) [4]int64 {
	return [4]int64{r.ThreadsDeleted, r.Checkpoints, r.Writes, r.Blobs}
}

// snapshot lists every tuple of the threads, all namespaces, for
// before/after comparisons.
func snapshot(t *testing.T, sv checkpointer.Saver, threads ...string) string {
	t.Helper()
	out := ""
	for _, th := range threads {
		c := cfgOf(th, "", "")
		for _, tp := range mustList(t, sv, &c, checkpointer.ListOptions{AllNamespaces: true}) {
			out += fmt.Sprintf("%s/%s/%s %v %v\n", th, tp.Config.CheckpointNS, tp.Config.CheckpointID, tp.Checkpoint.ChannelValues, tp.PendingWrites)
		}
	}
	return out
}

// testSweep checks checkpointer.Sweeper: idle threads go whole, active
// ones stay; KeepLatest keeps exactly the newest N per namespace with
// their writes and every value they read; a dry run reports the same
// counts and changes nothing; bad policies are refused; threads with ids
// that are not UUIDv6 are never found idle.
func (s *suite) testSweep(t *testing.T) {
	const hour = time.Hour
	t.Run("idle_threads", func(t *testing.T) {
		sv := s.newSaver(t)
		sw := sweeper(t, sv)
		idle, mixed, fresh := newThreadID("sw-idle"), newThreadID("sw-mixed"), newThreadID("sw-fresh")
		ic := putChainIDs(t, sv, idle, "", 3, agedIDs(48*hour))
		putChainIDs(t, sv, idle, childNS, 2, agedIDs(47*hour))
		mustPutWrites(t, sv, ic[2].cfg, []wr{{"ch", "w"}}, "task", "")
		// mixed is old in its root namespace but active in a child one:
		// idleness is over every namespace of the thread.
		mc := putChainIDs(t, sv, mixed, "", 2, agedIDs(48*hour))
		putChain(t, sv, mixed, childNS, 1)
		fc := putChain(t, sv, fresh, "", 2)
		rep := mustSweep(t, sw, checkpointer.RetentionPolicy{IdleTTL: 24 * hour}, checkpointer.SweepOptions{})
		// idle: 5 checkpoints, 1 write, values base+counter×3 (root) and
		// base+counter×2 (child).
		if got, want := counts(rep), [4]int64{1, 5, 1, 7}; got != want {
			t.Fatalf("report %+v: counts %v, want %v", rep, got, want)
		}
		if rep.ThreadsScanned != 3 {
			t.Fatalf("ThreadsScanned = %d, want 3", rep.ThreadsScanned)
		}
		if got := snapshot(t, sv, idle); got != "" {
			t.Fatalf("idle thread left:\n%s", got)
		}
		checkTuple(t, mustGetSome(t, sv, cfgOf(mixed, "", "")), mc[1].want)
		checkTuple(t, mustGetSome(t, sv, cfgOf(fresh, "", "")), fc[1].want)
		if n := len(listThread(t, sv, mixed, "")); n != 2 {
			t.Fatalf("mixed thread has %d root checkpoints, want 2", n)
		}
	})
	t.Run("idle_thread_orphan_writes", func(t *testing.T) {
		// An idle thread goes whole, the writes of checkpoint ids not
		// stored too; a sweep without IdleTTL does not ask the driver for
		// them (HeadSelector.Orphans).
		sv := s.newSaver(t)
		sw := sweeper(t, sv)
		idle := newThreadID("sw-idle")
		ids := agedIDs(48 * hour)
		putChainIDs(t, sv, idle, "", 2, ids)
		orphan := ids(7)
		mustPutWrites(t, sv, cfgOf(idle, "", orphan), []wr{{"ch", "orphan_val"}}, "task", "")
		rep := mustSweep(t, sw, checkpointer.RetentionPolicy{IdleTTL: 24 * hour}, checkpointer.SweepOptions{})
		if rep.ThreadsDeleted != 1 || rep.Writes != 1 {
			t.Fatalf("report %+v: want 1 thread and its 1 orphan write deleted", rep)
		}
		// The writes would show once their checkpoint is stored.
		cp := newCheckpoint(7, nil, nil)
		cp.ID = orphan
		mustPut(t, sv, cfgOf(idle, "", ""), cp, nil, nil)
		checkTuple(t, mustGetSome(t, sv, cfgOf(idle, "", orphan)), want{thread: idle, id: orphan})
	})
	t.Run("keep_latest", func(t *testing.T) {
		sv := s.newSaver(t)
		sw := sweeper(t, sv)
		thread, short := newThreadID("sw-keep"), newThreadID("sw-short")
		a := putChain(t, sv, thread, "", 5)
		b := putChain(t, sv, thread, childNS, 3)
		c := putChain(t, sv, short, "", 2)
		for i := range a {
			mustPutWrites(t, sv, a[i].cfg, []wr{{"ch", i}}, "task", "")
		}
		for i := range b {
			mustPutWrites(t, sv, b[i].cfg, []wr{{"ch", i}}, "task", "")
		}
		before := map[string]*checkpointer.Tuple{}
		for _, st := range append(append(a[3:], b[1:]...), c...) {
			before[st.want.ns+"/"+st.want.id] = mustGetSome(t, sv, cfgOf(st.want.thread, st.want.ns, st.want.id))
		}
		rep := mustSweep(t, sw, checkpointer.RetentionPolicy{KeepLatest: 2}, checkpointer.SweepOptions{BatchThreads: 1})
		// Gone: 3 root and 1 child checkpoints, their 4 writes, and the
		// counter values only they referenced (3 + 1); "base", written by
		// the first checkpoint of each namespace, stays.
		if got, want := counts(rep), [4]int64{0, 4, 4, 4}; got != want {
			t.Fatalf("report %+v: counts %v, want %v", rep, got, want)
		}
		if rep.Batches != 2 {
			t.Fatalf("Batches = %d with BatchThreads 1 over 2 threads, want 2", rep.Batches)
		}
		checkIDs(t, "root", idsOf(listThread(t, sv, thread, "")), []string{a[4].want.id, a[3].want.id})
		checkIDs(t, "child", idsOf(listThread(t, sv, thread, childNS)), []string{b[2].want.id, b[1].want.id})
		checkIDs(t, "short thread", idsOf(listThread(t, sv, short, "")), []string{c[1].want.id, c[0].want.id})
		for _, st := range append(append(a[3:], b[1:]...), c...) {
			got := mustGetSome(t, sv, cfgOf(st.want.thread, st.want.ns, st.want.id))
			w := before[st.want.ns+"/"+st.want.id]
			if fmt.Sprint(got.Checkpoint.ChannelValues, got.PendingWrites, got.ParentConfig) != fmt.Sprint(w.Checkpoint.ChannelValues, w.PendingWrites, w.ParentConfig) {
				t.Fatalf("%s after sweep: values %v writes %v, before %v %v", st.want.id,
					got.Checkpoint.ChannelValues, got.PendingWrites, w.Checkpoint.ChannelValues, w.PendingWrites)
			}
		}
		for _, st := range append(a[:3], b[0]) {
			if tp := mustGet(t, sv, cfgOf(st.want.thread, st.want.ns, st.want.id)); tp != nil {
				t.Fatalf("checkpoint %s survived KeepLatest", st.want.id)
			}
		}
		// A second sweep finds nothing more.
		if got := counts(mustSweep(t, sw, checkpointer.RetentionPolicy{KeepLatest: 2}, checkpointer.SweepOptions{})); got != [4]int64{} {
			t.Fatalf("second sweep removed %v", got)
		}
	})
	t.Run("keep_latest_v1_pending_sends", func(t *testing.T) {
		// A kept v<4 checkpoint reads its pending sends from its parent's
		// __pregel_tasks writes: they survive the parent; its other
		// writes do not.
		sv := s.newSaver(t)
		sw := sweeper(t, sv)
		thread := newThreadID("sw-v1")
		parent := newCheckpoint(0, nil, nil)
		parent.V = 1
		pcfg := mustPut(t, sv, cfgOf(thread, "", ""), parent, checkpointer.Metadata{"source": "loop", "step": 0}, nil)
		mustPutWrites(t, sv, pcfg, []wr{{checkpointer.ChannelTasks, "send-1"}, {checkpointer.ChannelTasks, "send-2"}}, "task-1", "")
		mustPutWrites(t, sv, pcfg, []wr{{"other", "not a send"}}, "task-2", "")
		va := sv.NextVersion("")
		child := newCheckpoint(1, map[string]any{"a": "x"}, map[string]string{"a": va})
		child.V = 1
		mustPut(t, sv, pcfg, child, checkpointer.Metadata{"source": "loop", "step": 1}, map[string]string{"a": va})
		before := mustGetSome(t, sv, cfgOf(thread, "", child.ID))
		rep := mustSweep(t, sw, checkpointer.RetentionPolicy{KeepLatest: 1}, checkpointer.SweepOptions{})
		if rep.Checkpoints != 1 || rep.Writes != 1 {
			t.Fatalf("report %+v: want the parent and its one non-send write removed", rep)
		}
		got := mustGetSome(t, sv, cfgOf(thread, "", child.ID))
		if !Equal(before.Checkpoint.ChannelValues, got.Checkpoint.ChannelValues) || !Equal([]any{"send-1", "send-2"}, got.Checkpoint.ChannelValues[checkpointer.ChannelTasks]) {
			t.Fatalf("after sweep: %v, before %v", got.Checkpoint.ChannelValues, before.Checkpoint.ChannelValues)
		}
	})
	t.Run("dry_run", func(t *testing.T) {
		sv := s.newSaver(t)
		sw := sweeper(t, sv)
		idle, busy := newThreadID("sw-dry"), newThreadID("sw-dry")
		ic := putChainIDs(t, sv, idle, "", 2, agedIDs(72*hour))
		mustPutWrites(t, sv, ic[1].cfg, []wr{{"ch", 1}}, "task", "")
		bc := putChain(t, sv, busy, "", 4)
		mustPutWrites(t, sv, bc[0].cfg, []wr{{"ch", 1}}, "task", "")
		p := checkpointer.RetentionPolicy{IdleTTL: hour, KeepLatest: 1}
		was := snapshot(t, sv, idle, busy)
		dry := mustSweep(t, sw, p, checkpointer.SweepOptions{DryRun: true})
		if !dry.DryRun {
			t.Fatal("dry-run report does not say so")
		}
		if got := snapshot(t, sv, idle, busy); got != was {
			t.Fatalf("dry run changed the data:\n%s\nwas\n%s", got, was)
		}
		real := mustSweep(t, sw, p, checkpointer.SweepOptions{})
		if counts(dry) != counts(real) || counts(real) == [4]int64{} {
			t.Fatalf("dry run reported %v, the sweep removed %v", counts(dry), counts(real))
		}
		// idle: 2 checkpoints, 1 write, 3 values; busy: 3 checkpoints, 1
		// write, 3 counter values.
		if got, want := counts(real), [4]int64{1, 5, 2, 6}; got != want {
			t.Fatalf("counts %v, want %v", got, want)
		}
	})
	t.Run("bad_policy", func(t *testing.T) {
		sv := s.newSaver(t)
		sw := sweeper(t, sv)
		thread := newThreadID("sw-bad")
		putChainIDs(t, sv, thread, "", 3, agedIDs(48*hour))
		was := snapshot(t, sv, thread)
		for _, p := range []checkpointer.RetentionPolicy{{IdleTTL: -time.Second}, {KeepLatest: -1}, {IdleTTL: hour, KeepLatest: -2}} {
			if _, err := sw.Sweep(t.Context(), p, checkpointer.SweepOptions{}); !errors.Is(err, checkpointer.ErrInvalidPolicy) {
				t.Fatalf("Sweep(%+v) = %v, want ErrInvalidPolicy", p, err)
			}
		}
		if _, err := sw.Sweep(t.Context(), checkpointer.RetentionPolicy{KeepLatest: 1}, checkpointer.SweepOptions{BatchThreads: -1}); !errors.Is(err, checkpointer.ErrInvalidPolicy) {
			t.Fatalf("Sweep with BatchThreads -1 = %v, want ErrInvalidPolicy", err)
		}
		if rep := mustSweep(t, sw, checkpointer.RetentionPolicy{}, checkpointer.SweepOptions{}); counts(rep) != [4]int64{} {
			t.Fatalf("empty policy removed %v", counts(rep))
		}
		if got := snapshot(t, sv, thread); got != was {
			t.Fatalf("refused sweeps changed the data:\n%s\nwas\n%s", got, was)
		}
	})
	t.Run("undatable_ids", func(t *testing.T) {
		sv := s.newSaver(t)
		sw := sweeper(t, sv)
		// Ids that are not lowercase UUIDv6 cannot be dated: such threads
		// are never idle, even when some of their ids are old UUIDv6 or
		// sort before every recent id.
		plain, mixed, upper := newThreadID("sw-plain"), newThreadID("sw-mixed"), newThreadID("sw-upper")
		putChainIDs(t, sv, plain, "", 3, func(i int) string { return fmt.Sprintf("0000-step-%d", i) })
		putChainIDs(t, sv, mixed, "", 2, agedIDs(48*hour))
		putChainIDs(t, sv, mixed, childNS, 1, func(int) string { return "0-imported" })
		old := agedIDs(48 * hour)
		putChainIDs(t, sv, upper, "", 1, func(i int) string { return upperHex(old(i)) })
		rep := mustSweep(t, sw, checkpointer.RetentionPolicy{IdleTTL: hour}, checkpointer.SweepOptions{})
		if counts(rep) != [4]int64{} {
			t.Fatalf("undatable threads swept: %+v", rep)
		}
		// KeepLatest orders any ids as text, as List does.
		rep = mustSweep(t, sw, checkpointer.RetentionPolicy{KeepLatest: 1}, checkpointer.SweepOptions{})
		if rep.Checkpoints != 3 {
			t.Fatalf("KeepLatest 1 removed %d checkpoints, want 3", rep.Checkpoints)
		}
		checkIDs(t, "plain", idsOf(listThread(t, sv, plain, "")), []string{"0000-step-2"})
	})
	t.Run("batches", func(t *testing.T) {
		sv := s.newSaver(t)
		sw := sweeper(t, sv)
		var threads []string
		for range 5 {
			th := newThreadID("sw-batch")
			threads = append(threads, th)
			putChainIDs(t, sv, th, "", 2, agedIDs(48*hour))
		}
		keep := newThreadID("sw-batch")
		putChain(t, sv, keep, "", 1)
		rep := mustSweep(t, sw, checkpointer.RetentionPolicy{IdleTTL: hour}, checkpointer.SweepOptions{BatchThreads: 2})
		if rep.ThreadsDeleted != 5 || rep.ThreadsScanned != 6 || rep.Batches != 3 {
			t.Fatalf("report %+v: want 5 threads deleted of 6 scanned in 3 batches", rep)
		}
		if got := snapshot(t, sv, threads...); got != "" {
			t.Fatalf("idle threads left:\n%s", got)
		}
		if n := len(listThread(t, sv, keep, "")); n != 1 {
			t.Fatalf("active thread has %d checkpoints, want 1", n)
		}
	})
}

// upperHex spells id's hex digits in upper case.
func upperHex(id string) string {
	b := []byte(id)
	for i, c := range b {
		if c >= 'a' && c <= 'f' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}
