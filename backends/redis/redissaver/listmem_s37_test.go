package redissaver_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/memvault/memvault/backends/redis/redissaver"
	"github.com/memvault/memvault/checkpointer"
)

// TestListAcrossThreadsMemoryBoundedByPage: a listing across threads read
// every thread's ids up to the limit — all of them when the engine
// filters metadata itself and so passes no limit — before merging them.
// A filtered List whose first checkpoint matches (limit 1) over 8
// threads of 1 000 checkpoints held all 8 000 ids (2.4 MB allocated); it
// now holds a batch per thread (2 048 ids, 0.5 MB). Measured in bytes allocated (TotalAlloc, this goroutine
// alone listing), against the same listing without a filter, which holds
// one id per thread either way.
func TestListAcrossThreadsMemoryBoundedByPage(t *testing.T) {
	const threads, perThread = 8, 1000
	s := newSaver(t, 8, redissaver.Options{})
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, threads)
	for th := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cfg := checkpointer.Config{ThreadID: fmt.Sprintf("t%d", th)}
			for i := range perThread {
				cp := newCheckpoint(s, i)
				var err error
				if cfg, err = s.Put(ctx, cfg, cp, checkpointer.Metadata{"step": i}, cp.ChannelVersions); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// The newest checkpoint, the one the filter matches.
	cp := newCheckpoint(s, perThread)
	if _, err := s.Put(ctx, checkpointer.Config{ThreadID: "t0"}, cp, checkpointer.Metadata{"tag": "last"}, cp.ChannelVersions); err != nil {
		t.Fatal(err)
	}
	alloc := func(opt checkpointer.ListOptions) (uint64, int) {
		var before, after runtime.MemStats
		n := 0
		runtime.ReadMemStats(&before)
		for _, err := range s.List(ctx, nil, opt) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc, n
	}
	alloc(checkpointer.ListOptions{Limit: 1}) // warm: connections, scripts
	plain, n := alloc(checkpointer.ListOptions{Limit: 1})
	if n != 1 {
		t.Fatalf("listed %d, want 1", n)
	}
	filtered, n := alloc(checkpointer.ListOptions{Limit: 1, Filter: map[string]any{"tag": "last"}})
	if n != 1 {
		t.Fatalf("filtered listing found %d, want 1", n)
	}
	t.Logf("List(limit 1): %d bytes; List(filter, limit 1): %d bytes (%d threads × %d checkpoints)", plain, filtered, threads, perThread)
	// Every id held costs about 250 bytes (the member read, its
	// scanItem, the sort): the first batches, 256 ids a thread, are
	// 0.5 MB; all 8 000 ids, 2.4 MB before, are what this refuses.
	if filtered > plain+1<<20 {
		t.Errorf("a filtered listing of 1 allocated %d bytes more than an unfiltered one: it holds the database's ids", filtered-plain)
	}
}

// BenchmarkListAcrossThreads: listings with no thread over 64 threads
// of 100 checkpoints whose ids interleave: the first 10, the first
// 1 000, and a filtered listing that matches nothing (the engine takes
// every checkpoint: the merge reads every batch).
func BenchmarkListAcrossThreads(b *testing.B) {
	const threads, perThread = 64, 100
	s := newSaver(b, 8, redissaver.Options{})
	ctx := context.Background()
	cfgs := make([]checkpointer.Config, threads)
	for i := range perThread {
		for th := range threads {
			if cfgs[th].ThreadID == "" {
				cfgs[th].ThreadID = fmt.Sprintf("t%d", th)
			}
			cp := newCheckpoint(s, i)
			var err error
			if cfgs[th], err = s.Put(ctx, cfgs[th], cp, checkpointer.Metadata{"step": i}, cp.ChannelVersions); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, c := range []struct {
		name string
		opt  checkpointer.ListOptions
		want int
	}{
		{"limit10", checkpointer.ListOptions{Limit: 10}, 10},
		{"limit1000", checkpointer.ListOptions{Limit: 1000}, 1000},
		{"filter_none", checkpointer.ListOptions{Limit: 1, Filter: map[string]any{"step": -1}}, 0},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				n := 0
				for _, err := range s.List(ctx, nil, c.opt) {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != c.want {
					b.Fatalf("listed %d, want %d", n, c.want)
				}
			}
		})
	}
}
