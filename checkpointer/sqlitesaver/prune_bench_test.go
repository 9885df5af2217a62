package sqlitesaver

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/checkpointer"
)

// BenchmarkPruneKeepLatest measures Prune(KeepLatest) of 200 old threads
// of 100 checkpoints each (seedOldSQLite's shape), all threads in one
// call and one call per thread; each iteration seeds the file again,
// untimed.
func BenchmarkPruneKeepLatest(b *testing.B) {
	const threads, per = 200, 100
	s := openSaver(b, filepath.Join(b.TempDir(), "prune.db"), Options{})
	ctx := context.Background()
	ids := make([]string, threads)
	for i := range ids {
		ids[i] = fmt.Sprintf("old-%06d", i)
	}
	for _, mode := range []string{"one-call", "per-thread"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				seedOldSQLite(b, s, threads, per)
				b.StartTimer()
				if mode == "one-call" {
					if err := s.Prune(ctx, ids, checkpointer.PruneKeepLatest); err != nil {
						b.Fatal(err)
					}
					continue
				}
				for _, id := range ids {
					if err := s.Prune(ctx, []string{id}, checkpointer.PruneKeepLatest); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
