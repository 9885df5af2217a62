package checkpointertest

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
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
	// The sweeper reports from its own goroutine: count what it deleted
	// there, so that no report is lost (a buffered channel that dropped
	// reports once lost the one that deleted, and the test waited forever).
	var deleted atomic.Int64
	var mu sync.Mutex
	var last error
	ran := make(chan struct{}, 1)
	sv, closeSaver := open(t, checkpointer.RetentionPolicy{IdleTTL: time.Hour}, 5*time.Millisecond,
		func(r checkpointer.SweepReport, err error) {
			deleted.Add(r.ThreadsDeleted)
			mu.Lock()
			last = err
			mu.Unlock()
			select {
			case ran <- struct{}{}:
			default: // a wake-up is pending already
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
	for deadline := time.After(2 * time.Minute); deleted.Load() == 0 || snapshot(t, sv, idle) != ""; {
		select {
		case <-ran:
		case <-deadline:
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("the background sweeper did not delete the idle thread in 2 minutes (%d threads deleted; last error: %v)", deleted.Load(), last)
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
		if !strings.Contains(stacks, "checkpointer.StartSweeper.func") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sweeper goroutine still running 10 s after Close:\n%s", stacks)
		}
	}
}
