package checkpointertest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
)

// resumePolicy is the retention the resume cases sweep with: threads idle
// for a day go, and each namespace keeps its two newest checkpoints.
var resumePolicy = checkpointer.RetentionPolicy{IdleTTL: 24 * time.Hour, KeepLatest: 2}

// nextOf returns the checkpoint an agent writes after reading tp: tp's
// channels carried over, "counter" advanced (the only channel in
// newVersions), "base" inherited unchanged.
func nextOf(sv checkpointer.Saver, tp *checkpointer.Tuple) (*checkpointer.Checkpoint, map[string]string) {
	versions := maps.Clone(tp.Checkpoint.ChannelVersions)
	values := maps.Clone(tp.Checkpoint.ChannelValues)
	n, _ := values["counter"].(int64)
	nv := map[string]string{"counter": sv.NextVersion(versions["counter"])}
	maps.Copy(versions, nv)
	values["counter"] = n + 1
	return newCheckpoint(int(n)+1, values, versions), nv
}

// checkComplete fails unless tp holds a value for every channel of its
// channel versions, equal to want's.
func checkComplete(tp *checkpointer.Tuple, want map[string]any) error {
	for ch := range tp.Checkpoint.ChannelVersions {
		if _, ok := tp.Checkpoint.ChannelValues[ch]; !ok {
			return fmt.Errorf("checkpoint %s lacks the value of channel %q (version %s): values %v",
				tp.Checkpoint.ID, ch, tp.Checkpoint.ChannelVersions[ch], tp.Checkpoint.ChannelValues)
		}
	}
	if !Equal(want, tp.Checkpoint.ChannelValues) {
		return fmt.Errorf("checkpoint %s reads %v, want %v", tp.Checkpoint.ID, tp.Checkpoint.ChannelValues, want)
	}
	return nil
}

// refusedGone checks that err is the refusal of a put whose parent is gone
// (checkpointer.ErrParentMissing, naming the parent) and that the put left
// no checkpoint behind.
func refusedGone(t *testing.T, sv checkpointer.Saver, err error, cfg checkpointer.Config, id string) {
	t.Helper()
	if !errors.Is(err, checkpointer.ErrParentMissing) {
		t.Fatalf("Put of a child of the removed checkpoint %s = %v, want checkpointer.ErrParentMissing", cfg.CheckpointID, err)
	}
	if !strings.Contains(err.Error(), cfg.CheckpointID) {
		t.Fatalf("error %q does not name the parent %s", err, cfg.CheckpointID)
	}
	if tp := mustGet(t, sv, cfgOf(cfg.ThreadID, cfg.CheckpointNS, id)); tp != nil {
		t.Fatalf("refused put stored checkpoint %s: %v", id, tp.Checkpoint.ChannelValues)
	}
}

// testResume: a Put continuing a checkpoint that a sweep, Prune,
// DeleteThread or DeleteCheckpoint removed since it was read is refused
// with checkpointer.ErrParentMissing and stores nothing (it would keep a
// checkpoint lacking the values it inherits); puts that inherit nothing
// still work; and a real sweep racing agents that resume threads never
// leaves an acknowledged checkpoint without a value.
func (s *suite) testResume(t *testing.T) {
	const day = 24 * time.Hour
	t.Run("swept_thread", func(t *testing.T) {
		sv := s.newSaver(t)
		sw := sweeper(t, sv)
		thread := newThreadID("rs-swept")
		putChainIDs(t, sv, thread, "", 3, agedIDs(2*day))
		latest := mustGetSome(t, sv, cfgOf(thread, "", ""))
		// The agent thinks; meanwhile the thread is found idle.
		if rep := mustSweep(t, sw, resumePolicy, checkpointer.SweepOptions{}); rep.ThreadsDeleted != 1 {
			t.Fatalf("sweep %+v: want the idle thread deleted", rep)
		}
		cp, nv := nextOf(sv, latest)
		_, err := sv.Put(t.Context(), latest.Config, cp, checkpointer.Metadata{"step": 3}, nv)
		refusedGone(t, sv, err, latest.Config, cp.ID)
		if tp := mustGet(t, sv, cfgOf(thread, "", "")); tp != nil {
			t.Fatalf("thread holds %s after the refused put", tp.Checkpoint.ID)
		}
		// Starting again works: a put that rewrites every channel needs
		// nothing from its parent, even one that is gone…
		again := cloneCheckpoint(cp)
		again.ID = checkpointer.NewID(3)
		cfg := mustPut(t, sv, latest.Config, again, checkpointer.Metadata{"step": 3}, maps.Clone(again.ChannelVersions))
		if err := checkComplete(mustGetSome(t, sv, cfg), again.ChannelValues); err != nil {
			t.Fatal(err)
		}
		// …and so does a put without a parent.
		fresh := newCheckpoint(0, map[string]any{"base": "new"}, map[string]string{"base": sv.NextVersion("")})
		other := newThreadID("rs-fresh")
		cfg = mustPut(t, sv, cfgOf(other, "", ""), fresh, nil, maps.Clone(fresh.ChannelVersions))
		if err := checkComplete(mustGetSome(t, sv, cfg), fresh.ChannelValues); err != nil {
			t.Fatal(err)
		}
	})
	s.runNS(t, []nsCase{
		{"deleted_thread", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("rs-del")
			putChain(t, sv, thread, ns, 2)
			latest := mustGetSome(t, sv, cfgOf(thread, ns, ""))
			if err := sv.DeleteThread(t.Context(), thread); err != nil {
				t.Fatal(err)
			}
			cp, nv := nextOf(sv, latest)
			_, err := sv.Put(t.Context(), latest.Config, cp, nil, nv)
			refusedGone(t, sv, err, latest.Config, cp.ID)
			// A checkpoint of a format before 4 reads its pending sends
			// from its parent's writes: it needs its parent even when it
			// rewrites every channel.
			legacy := cloneCheckpoint(cp)
			legacy.V = 1
			_, err = sv.Put(t.Context(), latest.Config, legacy, nil, maps.Clone(legacy.ChannelVersions))
			refusedGone(t, sv, err, latest.Config, legacy.ID)
		}},
		{"pruned_checkpoint", func(t *testing.T, sv checkpointer.Saver, ns string) {
			// Forking from (or resuming at) a checkpoint that Prune, a
			// KeepLatest sweep or DeleteCheckpoint removed.
			thread := newThreadID("rs-prune")
			chain := putChain(t, sv, thread, ns, 4)
			old := mustGetSome(t, sv, chain[1].cfg)
			older := mustGetSome(t, sv, chain[0].cfg)
			latest := mustGetSome(t, sv, chain[3].cfg) // its parent chain[2] goes below
			// Time travel from an existing checkpoint works, and the fork
			// reads every value.
			fork, nv := nextOf(sv, old)
			cfg := mustPut(t, sv, old.Config, fork, nil, nv)
			if err := checkComplete(mustGetSome(t, sv, cfg), fork.ChannelValues); err != nil {
				t.Fatal(err)
			}
			if d, ok := sv.(checkpointer.CheckpointDeleter); ok {
				mid := mustGetSome(t, sv, chain[2].cfg)
				if err := d.DeleteCheckpoint(t.Context(), chain[2].cfg); err != nil {
					t.Fatal(err)
				}
				cp, nv := nextOf(sv, mid)
				_, err := sv.Put(t.Context(), mid.Config, cp, nil, nv)
				refusedGone(t, sv, err, mid.Config, cp.ID)
				// Its child, still stored, is continued as before.
				cp, nv = nextOf(sv, latest)
				cfg := mustPut(t, sv, latest.Config, cp, nil, nv)
				if err := checkComplete(mustGetSome(t, sv, cfg), cp.ChannelValues); err != nil {
					t.Fatal(err)
				}
			}
			p, ok := sv.(checkpointer.Pruner)
			if !ok {
				return
			}
			if err := p.Prune(t.Context(), []string{thread}, checkpointer.PruneKeepLatest); err != nil {
				t.Fatal(err)
			}
			for _, from := range []*checkpointer.Tuple{old, older} {
				cp, nv := nextOf(sv, from)
				_, err := sv.Put(t.Context(), from.Config, cp, nil, nv)
				refusedGone(t, sv, err, from.Config, cp.ID)
			}
		}},
	})
	t.Run("race_with_sweep", func(t *testing.T) {
		sv := s.newSaver(t)
		sw := sweeper(t, sv)
		ResumeDuringSweep(t, sv, func(ctx context.Context) error {
			_, err := sw.Sweep(ctx, resumePolicy, checkpointer.SweepOptions{BatchThreads: 4})
			return err
		})
	})
}

// agedThread stores thread as putChainIDs does, three checkpoints two
// days old, and returns its latest checkpoint as read back; nil when a
// background sweep removed it first (a put of the chain then fails with
// checkpointer.ErrParentMissing).
func agedThread(t *testing.T, sv checkpointer.Saver, thread string) *checkpointer.Tuple {
	t.Helper()
	id := agedIDs(48 * time.Hour)
	cfg := cfgOf(thread, "", "")
	versions := map[string]string{}
	for i := range 3 {
		nv := map[string]string{"counter": sv.NextVersion(versions["counter"])}
		vals := map[string]any{"counter": int64(i), "base": "base value"}
		if i == 0 {
			nv["base"] = sv.NextVersion("")
		}
		maps.Copy(versions, nv)
		cp := newCheckpoint(i-1, vals, maps.Clone(versions))
		cp.ID = id(i)
		out, err := sv.Put(t.Context(), cfg, cp, checkpointer.Metadata{"step": i - 1}, nv)
		if errors.Is(err, checkpointer.ErrParentMissing) {
			return nil
		}
		if err != nil {
			t.Fatalf("Put(%+v, %s): %v", cfg, cp.ID, err)
		}
		cfg = out
	}
	return mustGet(t, sv, cfg)
}

// ResumeDuringSweep races agents resuming threads against retention: it
// stores idle threads (checkpoints two days old, three per thread, each
// with the channels "base", written once, and "counter"), and while
// sweep runs in a loop (nil: sv runs its own background sweeper, with an
// IdleTTL shorter than two days) workers read each thread's latest
// checkpoint, pause as an agent calling a model would, and put the next
// one, inheriting "base". Every acknowledged checkpoint must then read
// back whole, every refused put must have failed with
// checkpointer.ErrParentMissing and stored nothing, and the agent whose
// thread went starts it again from nothing. The figures are logged.
func ResumeDuringSweep(t *testing.T, sv checkpointer.Saver, sweep func(ctx context.Context) error) {
	const threads, workers = 48, 4
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	type acked struct {
		cfg    checkpointer.Config
		values map[string]any
	}
	var (
		mu                        sync.Mutex
		ok                        []acked
		refused, restarted, early int
		fails                     []error
	)
	fail := func(err error) {
		mu.Lock()
		fails = append(fails, err)
		mu.Unlock()
	}
	// Each thread is read the moment it is stored (a background sweeper
	// may find it idle before): the agents hold what they read.
	ids := make([]string, threads)
	read := make([]*checkpointer.Tuple, threads)
	for i := range threads {
		ids[i] = newThreadID(fmt.Sprintf("rs-race%02d", i))
		read[i] = agedThread(t, sv, ids[i])
	}
	// The sweeps start with the agents' pauses: each thread is written
	// before or after its sweep, or while it runs.
	var sweeps sync.WaitGroup
	sweepErr := make(chan error, 1)
	nSweeps := 0
	if sweep != nil {
		sweeps.Go(func() {
			// A first pass that outruns every agent would only test
			// refusals: let some agents write first.
			time.Sleep(5 * time.Millisecond)
			for ctx.Err() == nil {
				if err := sweep(ctx); err != nil && ctx.Err() == nil {
					sweepErr <- err
					return
				}
				nSweeps++
				time.Sleep(100 * time.Microsecond) // let the writers in
			}
		})
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < threads; i += workers {
				time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond) // the model call
				tp := read[i]
				if tp == nil { // swept before it could be read
					mu.Lock()
					early++
					mu.Unlock()
					continue
				}
				cp, nv := nextOf(sv, tp)
				cfg, err := sv.Put(ctx, tp.Config, cp, checkpointer.Metadata{"step": 3}, nv)
				switch {
				case err == nil:
					mu.Lock()
					ok = append(ok, acked{cfg, cp.ChannelValues})
					mu.Unlock()
					continue
				case !errors.Is(err, checkpointer.ErrParentMissing):
					fail(fmt.Errorf("thread %s: put: %w (want success or checkpointer.ErrParentMissing)", tp.Config.ThreadID, err))
					continue
				}
				if gone, err := sv.GetTuple(ctx, cfgOf(tp.Config.ThreadID, "", cp.ID)); err != nil || gone != nil {
					fail(fmt.Errorf("thread %s: refused put left %v (%v)", tp.Config.ThreadID, gone, err))
				}
				// Start again: a first checkpoint, without a parent.
				first := newCheckpoint(0, map[string]any{"base": "again", "counter": int64(0)},
					map[string]string{"base": sv.NextVersion(""), "counter": sv.NextVersion("")})
				cfg, err = sv.Put(ctx, checkpointer.Config{ThreadID: tp.Config.ThreadID}, first, nil, maps.Clone(first.ChannelVersions))
				mu.Lock()
				refused++
				if err != nil {
					fails = append(fails, fmt.Errorf("thread %s: start again: %w", tp.Config.ThreadID, err))
				} else {
					restarted++
					ok = append(ok, acked{cfg, first.ChannelValues})
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	stop()
	sweeps.Wait()
	select {
	case err := <-sweepErr:
		t.Fatalf("sweep: %v", err)
	default:
	}
	if err := errors.Join(fails...); err != nil {
		t.Fatal(err)
	}
	// Every acknowledged checkpoint is newer than any IdleTTL and the
	// newest of its thread: it stays, whole.
	lost := 0
	for _, a := range ok {
		tp := mustGet(t, sv, a.cfg)
		if tp == nil {
			t.Errorf("acknowledged checkpoint %s of %s is gone", a.cfg.CheckpointID, a.cfg.ThreadID)
			continue
		}
		if err := checkComplete(tp, a.values); err != nil {
			lost++
			t.Errorf("thread %s: %v", a.cfg.ThreadID, err)
		}
	}
	t.Logf("%d threads: %d puts acknowledged (%d lost values), %d refused with ErrParentMissing and started again (%d), %d swept before being read; %d sweeps",
		threads, len(ok)-restarted, lost, refused, restarted, early, nSweeps)
}
