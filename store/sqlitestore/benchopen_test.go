package sqlitestore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"testing"
	"time"

	"github.com/memvault/memvault/store"
)

// BenchmarkReopen1536 (not named …Search1536: -bench 'Search1536$' runs
// BenchmarkSearch1536 alone) opens a store on the database of
// BenchmarkSearch1536 once an iteration (-benchtime=Nx: N opens) and
// reports the worst and the median first search after the open, in wall
// and CPU time, the code rows it read and the process's high-water memory
// of each open (reset before it: /proc/self/clear_refs), so that a target
// met "every time" is seen as such. "after-delete" first deletes an item
// in a store that holds the index (a long-lived process, or its TTL
// sweeper), closes it and opens another: the open after a delete; each
// iteration puts the item back after its search, leaving the file as it
// was. MEMVAULT_BENCH_CPUPROFILE names a directory for a CPU profile of
// each first search.
func BenchmarkReopen1536(b *testing.B) {
	items, dims := benchEnvInt("MEMVAULT_BENCH_ITEMS", 2000), benchEnvInt("MEMVAULT_BENCH_DIMS", 1536)
	path := benchDB(b, items, dims)
	g := newClustered(items, dims)
	ctx := context.Background()
	profDir := os.Getenv("MEMVAULT_BENCH_CPUPROFILE")
	item := func(n int) (store.Namespace, string, map[string]any) {
		return store.Namespace{"bench", fmt.Sprint(n % 10)}, fmt.Sprint(n), map[string]any{"text": fmt.Sprint("v", n)}
	}
	for _, afterDelete := range []bool{false, true} {
		name := "open"
		if afterDelete {
			name = "after-delete"
		}
		b.Run(name, func(b *testing.B) {
			var wall, cpu []time.Duration
			var hwm, rows, refined []float64
			for i := 0; b.Loop(); i++ {
				victim := (7919 * (i + 1)) % items
				if afterDelete {
					a := openStore(b, path, Options{Index: g.index()})
					if _, err := a.Search(ctx, store.Namespace{"bench"}, store.SearchOptions{Query: "q0", Limit: 10}); err != nil {
						b.Fatal(err)
					}
					a.cache.WaitFill()
					ns, key, _ := item(victim)
					if err := a.Delete(ctx, ns, key); err != nil {
						b.Fatal(err)
					}
					if err := a.Close(); err != nil {
						b.Fatal(err)
					}
				}
				runtime.GC()
				debug.FreeOSMemory()
				// Resets VmHWM to the current RSS: each open's peak, not the
				// process's since the first.
				_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
				s := openStore(b, path, Options{Index: g.index()})
				if profDir != "" {
					f, err := os.Create(filepath.Join(profDir, fmt.Sprintf("first-%s-%d.pprof", name, i)))
					if err != nil {
						b.Fatal(err)
					}
					if err := pprof.StartCPUProfile(f); err != nil {
						b.Fatal(err)
					}
					defer f.Close()
				}
				rows0, ref0 := s.cache.Stats.CodeRows.Load(), s.cache.Stats.Refined.Load()
				cpu0, t0 := cpuTime(), time.Now()
				res, err := s.Search(ctx, store.Namespace{"bench"}, store.SearchOptions{Query: fmt.Sprint("q", i+1), Limit: 10})
				wall = append(wall, time.Since(t0))
				cpu = append(cpu, cpuTime()-cpu0)
				if profDir != "" {
					pprof.StopCPUProfile()
				}
				if err != nil || len(res) != 10 {
					b.Fatal(err, len(res))
				}
				rows = append(rows, float64(s.cache.Stats.CodeRows.Load()-rows0))
				refined = append(refined, float64(s.cache.Stats.Refined.Load()-ref0))
				s.cache.WaitFill()
				hwm = append(hwm, procStatus("VmHWM"))
				if afterDelete {
					ns, key, v := item(victim)
					if err := s.Put(ctx, ns, key, v); err != nil {
						b.Fatal(err)
					}
				}
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
			}
			slices.Sort(wall)
			slices.Sort(cpu)
			b.ReportMetric(ms(wall[len(wall)-1]), "first-max-ms")
			b.ReportMetric(ms(wall[len(wall)/2]), "first-p50-ms")
			b.ReportMetric(ms(cpu[len(cpu)-1]), "first-cpu-max-ms")
			b.ReportMetric(ms(cpu[len(cpu)/2]), "first-cpu-p50-ms")
			b.ReportMetric(slices.Max(hwm), "hwm-max-MB")
			b.ReportMetric(slices.Max(rows), "code-rows-max")
			// Items bounded by their fine parts, read from SQLite: the
			// first search has no middle parts yet (read behind it).
			b.ReportMetric(slices.Max(refined), "refined-max")
		})
	}
}
