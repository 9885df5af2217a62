package durable_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/durable"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
)

// BenchmarkPut measures checkpoint puts per second through the decorator
// in each mode, on SQLite (a file; WAL synced at checkpoints, the
// default, and at every commit with FullSync) and PostgreSQL (for
// durable figures set TEST_DATABASE_URL to a server with fsync on: the
// throwaway test cluster runs without fsync), with 1 and 16 threads
// written at once (one goroutine per thread, each continuing its last
// checkpoint with a new 512-byte value and an inherited one, as a graph
// step does). The final Flush is inside the timing: the figure is of puts
// made durable, not merely queued. "async-nobatch" is Async with MaxBatch
// 1 (one transaction per put), to show what batching gives.
func BenchmarkPut(b *testing.B) {
	modes := []struct {
		name string
		opt  durable.Options
	}{
		{"sync", durable.Options{Mode: durable.Sync}},
		{"async", durable.Options{Mode: durable.Async}},
		{"async-nobatch", durable.Options{Mode: durable.Async, MaxBatch: 1}},
		{"exit", durable.Options{Mode: durable.Exit}},
	}
	backends := []struct {
		name string
		open func(b *testing.B) checkpointer.Saver
	}{
		{"sqlite", func(b *testing.B) checkpointer.Saver { return newSQLite(b, "") }},
		{"sqlite-fullsync", func(b *testing.B) checkpointer.Saver {
			s, err := sqlitesaver.Open(b.Context(), filepath.Join(b.TempDir(), "cp.db"), sqlitesaver.Options{FullSync: true})
			if err != nil {
				b.Fatal(err)
			}
			return s
		}},
		{"postgres", func(b *testing.B) checkpointer.Saver { return newPG(b) }},
	}
	value := strings.Repeat("x", 512)
	for _, be := range backends {
		for _, inflight := range []int{1, 16} {
			for _, m := range modes {
				b.Run(fmt.Sprintf("%s/inflight=%d/%s", be.name, inflight, m.name), func(b *testing.B) {
					sv := wrap(b, be.open(b), m.opt)
					ctx := b.Context()
					per := (b.N + inflight - 1) / inflight
					b.ResetTimer()
					var wg sync.WaitGroup
					errs := make(chan error, inflight)
					for g := range inflight {
						wg.Go(func() {
							cfg := checkpointer.Config{ThreadID: fmt.Sprintf("bench-%s-%d-%d", m.name, b.N, g)}
							versions := map[string]string{}
							for i := range per {
								nv := map[string]string{"value": sv.NextVersion(versions["value"])}
								if i == 0 {
									nv["base"] = sv.NextVersion("")
								}
								for k, v := range nv {
									versions[k] = v
								}
								cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i),
									ChannelValues:   map[string]any{"base": "base", "value": value},
									ChannelVersions: versions, VersionsSeen: map[string]map[string]string{}}
								next, err := sv.Put(ctx, cfg, cp, checkpointer.Metadata{"step": i}, nv)
								if err != nil {
									errs <- err
									return
								}
								cfg = next
							}
						})
					}
					wg.Wait()
					if err := sv.Flush(ctx); err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					close(errs)
					for err := range errs {
						b.Fatal(err)
					}
					b.ReportMetric(float64(per*inflight)/b.Elapsed().Seconds(), "puts/s")
				})
			}
		}
	}
}
