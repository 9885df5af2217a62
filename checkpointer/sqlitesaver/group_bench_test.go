package sqlitesaver_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
)

// BenchmarkGroupCommit measures puts (two new ~400-byte values each, a
// thread per writer) with group commit off and on, at 1 and 16 writers,
// with the file's default sync (none per commit in WAL mode) and
// FullSync (one per commit, which a group shares).
func BenchmarkGroupCommit(b *testing.B) {
	val := strings.Repeat("x", 400)
	for _, full := range []bool{false, true} {
		for _, conc := range []int{1, 16} {
			for _, group := range []int{0, 64} {
				b.Run(fmt.Sprintf("fullsync=%v/writers=%d/group=%d", full, conc, group), func(b *testing.B) {
					s, err := sqlitesaver.Open(context.Background(), filepath.Join(b.TempDir(), "g.db"), sqlitesaver.Options{GroupCommit: group, FullSync: full})
					if err != nil {
						b.Fatal(err)
					}
					defer s.Close()
					var next atomic.Int64
					var wg sync.WaitGroup
					b.ResetTimer()
					for w := range conc {
						wg.Add(1)
						go func() {
							defer wg.Done()
							for {
								i := int(next.Add(1))
								if i > b.N {
									return
								}
								v := fmt.Sprint(i)
								cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), ChannelValues: map[string]any{"a": val, "b": val},
									ChannelVersions: map[string]string{"a": v, "b": v}}
								if _, err := s.Put(context.Background(), checkpointer.Config{ThreadID: fmt.Sprintf("w%d", w)}, cp, nil, cp.ChannelVersions); err != nil {
									b.Error(err)
									return
								}
							}
						}()
					}
					wg.Wait()
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "puts/s")
				})
			}
		}
	}
}
