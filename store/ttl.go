package store

import (
	"context"
	"sync"
	"time"
)

// DefaultSweepInterval is how often stores delete expired items when
// TTLConfig.SweepInterval is 0 (LangGraph's default).
const DefaultSweepInterval = 5 * time.Minute

// SweepEvery resolves the config's interval: DefaultSweepInterval for 0,
// and 0 (disabled) for a negative interval.
func (c TTLConfig) SweepEvery() time.Duration {
	switch {
	case c.SweepInterval == 0:
		return DefaultSweepInterval
	case c.SweepInterval < 0:
		return 0
	}
	return c.SweepInterval
}

// SweepLoop calls sweep every interval until stop is closed, then closes
// done; each sweep may take at most the interval. A failed sweep (a busy
// database) is retried at the next tick: a library logs nothing, and
// callers who want errors call Sweep themselves.
func SweepLoop(every time.Duration, stop <-chan struct{}, done chan<- struct{}, sweep func(context.Context) (int, error)) {
	defer close(done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			ctx, cancel := context.WithTimeout(context.Background(), every)
			_, _ = sweep(ctx)
			cancel()
		}
	}
}

// StartSweeper runs sweep every interval in the background (see
// SweepLoop) until the returned stop is called; stop waits for a running
// sweep to end and is safe to call twice. An interval ≤ 0 starts nothing.
// A store starts its own from TTLConfig; a decorator that must see every
// sweep (the audited store, which records each before it runs) starts one
// over itself instead, with the inner store's disabled.
func StartSweeper(every time.Duration, sweep func(context.Context) (int, error)) (stop func()) {
	if every <= 0 {
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go SweepLoop(every, quit, done, sweep)
	var once sync.Once
	return func() {
		once.Do(func() { close(quit) })
		<-done
	}
}
