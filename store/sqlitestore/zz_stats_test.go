package sqlitestore

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/memvault/memvault/store"
)

func TestZZStats(t *testing.T) {
	path := os.Getenv("MEMVAULT_PROF_DB")
	if path == "" {
		t.Skip()
	}
	g := newTopics(benchEnvInt("MEMVAULT_BENCH_ITEMS", 20000), 1536, benchEnvInt("MEMVAULT_BENCH_TOPICS", 16))
	s := openStore(t, path, Options{Index: g.index()})
	defer s.Close()
	ctx := context.Background()
	s.Search(ctx, store.Namespace{"bench"}, store.SearchOptions{Query: "q0", Limit: 10})
	r0, f0 := s.cache.Stats.Rescored.Load(), s.cache.Stats.Refined.Load()
	for j := 1; j <= 30; j++ {
		s.Search(ctx, store.Namespace{"bench"}, store.SearchOptions{Query: fmt.Sprint("q", j), Limit: 10})
	}
	fmt.Printf("STATS rescored/search=%.1f refined/search=%.1f abandoned=%d\n", float64(s.cache.Stats.Rescored.Load()-r0)/30, float64(s.cache.Stats.Refined.Load()-f0)/30, s.cache.Stats.Abandoned.Load())
}
