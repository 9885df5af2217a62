package checkpointer

import (
	"context"
	"sync"
	"time"
)

// DefaultSweepInterval is how often a background sweeper runs when its
// interval is 0.
const DefaultSweepInterval = time.Hour

// BackgroundSweeper applies a retention policy periodically until Stop.
type BackgroundSweeper struct {
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// StartSweeper starts a goroutine that calls sweep every interval (0:
// DefaultSweepInterval) with policy, first after one interval, and hands each
// report to onSweep when it is not nil. It returns nil, starting nothing,
// for an empty policy or a negative interval. Errors do not stop it: the
// next tick tries again. The savers start one from their Retention
// option; a decorator that must see every sweep (the audit trail's) starts
// one over itself instead, with its inner saver's Retention left empty.
func StartSweeper(policy RetentionPolicy, interval time.Duration,
	sweep func(context.Context, RetentionPolicy, SweepOptions) (SweepReport, error),
	onSweep func(SweepReport, error)) *BackgroundSweeper {
	if policy.Empty() || interval < 0 {
		return nil
	}
	if interval == 0 {
		interval = DefaultSweepInterval
	}
	ctx, cancel := context.WithCancel(context.Background())
	b := &BackgroundSweeper{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(b.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			rep, err := sweep(ctx, policy, SweepOptions{})
			if ctx.Err() != nil {
				return // stopped mid-sweep: not a failure to report
			}
			if onSweep != nil {
				onSweep(rep, err)
			}
		}
	}()
	return b
}

// Stop cancels the sweeper (an unfinished sweep stops at its current
// batch, whose transaction rolls back) and waits for its goroutine to
// return. It is safe on a nil BackgroundSweeper and when called twice.
func (b *BackgroundSweeper) Stop() {
	if b == nil {
		return
	}
	b.once.Do(b.cancel)
	<-b.done
}
