package checkpointertest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
)

// BenchPutsDuringSweep measures what a retention sweep costs writers: each
// of b.N rounds runs seed (timer stopped: it fills the tables with old
// checkpoints) and 20 warm-up puts, then sw.Sweep(policy, opt) in the
// background while put runs in a loop, then as many puts again (at least
// 50) with no sweep. put does one Put and returns its latency. It reports
// put p50/p99 during the sweep and without it, the puts made during it,
// the sweep's time and the checkpoints it removed. Every driver's
// BenchmarkPutDuringSweep runs it, so their figures compare.
func BenchPutsDuringSweep(b *testing.B, sw checkpointer.Sweeper, policy checkpointer.RetentionPolicy, opt checkpointer.SweepOptions,
	seed func(), put func() time.Duration) {
	b.Helper()
	ctx := context.Background()
	var (
		during, idle []time.Duration
		rep          checkpointer.SweepReport
		sweepTime    time.Duration
	)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		seed()
		for range 20 { // warm the pool and the statement cache
			put()
		}
		b.StartTimer()
		done := make(chan error, 1)
		t0 := time.Now()
		go func() {
			r, err := sw.Sweep(ctx, policy, opt)
			sweepTime, rep = time.Since(t0), r
			done <- err
		}()
		n := 0
	loop:
		for {
			select {
			case err := <-done:
				if err != nil {
					b.Fatal(err)
				}
				break loop
			default:
				during = append(during, put())
				n++
			}
		}
		for range max(n, 50) {
			idle = append(idle, put())
		}
	}
	b.StopTimer()
	pct := func(d []time.Duration, p float64) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[min(len(s)-1, int(p*float64(len(s))))].Microseconds()) / 1000
	}
	if len(during) > 0 {
		b.ReportMetric(pct(during, 0.50), "p50-sweeping-ms")
		b.ReportMetric(pct(during, 0.99), "p99-sweeping-ms")
	}
	b.ReportMetric(pct(idle, 0.50), "p50-idle-ms")
	b.ReportMetric(pct(idle, 0.99), "p99-idle-ms")
	b.ReportMetric(float64(len(during))/float64(b.N), "puts-during-sweep")
	b.ReportMetric(sweepTime.Seconds(), "sweep-s")
	b.ReportMetric(float64(rep.Checkpoints), "ckpts-removed")
	b.ReportMetric(0, "ns/op")
}
