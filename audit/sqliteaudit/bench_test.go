package sqliteaudit_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"path/filepath"

	"github.com/memvault/memvault/audit/audittest"

	"github.com/memvault/memvault/audit/sqliteaudit"
)

// BenchmarkLog appends records at 1 and 16 in flight (one trail: the
// callers of one process, whose records group commit writes together).
func BenchmarkLog(b *testing.B) {
	for _, conc := range []int{1, 16} {
		b.Run(fmt.Sprint("inflight=", conc), func(b *testing.B) {
			tb, err := sqliteaudit.Open(b.Context(), filepath.Join(b.TempDir(), "audit.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer tb.Close()
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
