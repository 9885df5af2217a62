package checkpointer

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"
)

// sweeperRunning reports whether a background sweeper goroutine exists.
func sweeperRunning() bool {
	buf := make([]byte, 1<<20)
	return strings.Contains(string(buf[:runtime.Stack(buf, true)]), "checkpointer.StartSweeper.func")
}

func TestStartSweeperStops(t *testing.T) {
	if b := StartSweeper(RetentionPolicy{}, time.Millisecond, nil, nil); b != nil {
		t.Fatal("an empty policy started a sweeper")
	}
	if b := StartSweeper(RetentionPolicy{KeepLatest: 1}, -1, nil, nil); b != nil {
		t.Fatal("a negative interval started a sweeper")
	}
	started := make(chan struct{})
	var reports int
	b := StartSweeper(RetentionPolicy{KeepLatest: 1}, time.Millisecond,
		func(ctx context.Context, _ RetentionPolicy, _ SweepOptions) (SweepReport, error) {
			close(started)
			<-ctx.Done() // a sweep that runs until stopped
			return SweepReport{}, ctx.Err()
		},
		func(SweepReport, error) { reports++ })
	<-started
	b.Stop()
	b.Stop() // twice is fine
	// Stop returns once the goroutine closed done; it may still be on its
	// way out (its deferred calls) for a moment. It must be gone soon, not
	// run on: wait for that, within a generous bound.
	for deadline := time.Now().Add(10 * time.Second); sweeperRunning(); {
		if time.Now().After(deadline) {
			t.Fatal("sweeper goroutine still running 10 s after Stop")
		}
		time.Sleep(time.Millisecond)
	}
	if reports != 0 {
		t.Fatalf("a sweep cut short by Stop was reported %d times", reports)
	}
	var nilB *BackgroundSweeper
	nilB.Stop()
}
