package checkpointertest

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
)

// OpenWithRetention opens a saver over empty storage whose Options carry a
// retention policy, sweep interval and OnSweep hook, and returns it with
// the function that closes it.
type OpenWithRetention func(t *testing.T, policy checkpointer.RetentionPolicy, interval time.Duration,
	onSweep func(checkpointer.SweepReport, error)) (sv checkpointer.Saver, close func() error)

// RunBackgroundSweep checks a saver's background sweeper: it applies the
// policy of the saver's Options by itself, reports to OnSweep, and its
// goroutine is gone once Close returns.
func RunBackgroundSweep(t *testing.T, open OpenWithRetention) {
	type result struct {
		r   checkpointer.SweepReport
		err error
	}
	reports := make(chan result, 1)
	sv, closeSaver := open(t, checkpointer.RetentionPolicy{IdleTTL: time.Hour}, 5*time.Millisecond,
		func(r checkpointer.SweepReport, err error) {
			select {
			case reports <- result{r, err}:
			default: // the test reads one report at a time
			}
		})
	idle, fresh := newThreadID("bg-idle"), newThreadID("bg-fresh")
	// One checkpoint: a second, continuing it, would be refused
	// (ErrParentMissing) whenever the sweeper ran between the two puts.
	putChainIDs(t, sv, idle, "", 1, agedIDs(48*time.Hour))
	fc := putChain(t, sv, fresh, "", 1)
	// A sweep may fail before the saver's tables exist (a PostgreSQL
	// saver is created before Setup); the sweeper keeps going until the
	// thread is gone.
	var last error
	for deleted, gone := false, false; !gone; {
		select {
		case r := <-reports:
			last = r.err
			deleted = deleted || r.r.ThreadsDeleted > 0 // reports may be dropped: count any
			gone = deleted && snapshot(t, sv, idle) == ""
		case <-t.Context().Done():
			t.Fatalf("the background sweeper never deleted the idle thread (last error: %v)", last)
		}
	}
	checkTuple(t, mustGetSome(t, sv, cfgOf(fresh, "", "")), fc[0].want)
	if err := closeSaver(); err != nil {
		t.Fatal(err)
	}
	// Close returns once the sweeper closed its done channel; the
	// goroutine may still be on its way out for a moment. It must be gone
	// soon, not run on: wait for that, within a generous bound.
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		stacks := string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, "core.StartSweeper.func") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sweeper goroutine still running 10 s after Close:\n%s", stacks)
		}
	}
}
