package pgaudit_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/memvault/memvault/audit/audittest"
	"github.com/memvault/memvault/audit/pgaudit"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// BenchmarkLog appends records at 1 and 16 in flight (one trail: the
// callers of one process, whose records group commit writes together).
// With TEST_DATABASE_URL naming a server with fsync on, it measures what
// each commit costs on that disk.
func BenchmarkLog(b *testing.B) {
	for _, conc := range []int{1, 16} {
		b.Run(fmt.Sprint("inflight=", conc), func(b *testing.B) {
			tb, err := pgaudit.New(pgtest.Pool(b), pgaudit.Options{})
			if err != nil {
				b.Fatal(err)
			}
			if err := tb.Setup(b.Context()); err != nil {
				b.Fatal(err)
			}
			tr, err := audittest.KillTrail(tb)
			if err != nil {
				b.Fatal(err)
			}
			var next atomic.Int64
			b.ResetTimer()
			var wg sync.WaitGroup
			for range conc {
				wg.Go(func() {
					for next.Add(1) <= int64(b.N) {
						if err := tr.Log(context.Background(), "item.write", "users.u/k", "", ""); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
