package pgsaver_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// TestPutWritesOppositeOrdersNoDeadlock: many goroutines upsert the same
// special-channel writes of one task in opposite orders. Each call locks
// its rows in one canonical order, so PostgreSQL never has to abort one
// with "deadlock detected" (40P01) — before, about 3 % of such calls failed.
func TestPutWritesOppositeOrdersNoDeadlock(t *testing.T) {
	ctx := context.Background()
	s, err := pgsaver.New(pgtest.Pool(t), pgsaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now().UTC()}
	cfg, err := s.Put(ctx, checkpointer.Config{ThreadID: "dl"}, cp, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	forward := []checkpointer.Write{
		{Channel: checkpointer.ChannelError, Value: "e"}, {Channel: checkpointer.ChannelScheduled, Value: "s"},
		{Channel: checkpointer.ChannelInterrupt, Value: "i"}, {Channel: checkpointer.ChannelResume, Value: "r"},
	}
	backward := []checkpointer.Write{forward[3], forward[2], forward[1], forward[0]}
	const workers, rounds = 16, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			writes := forward
			if w%2 == 1 {
				writes = backward
			}
			for range rounds {
				if err := s.PutWrites(ctx, cfg, writes, "task", ""); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	n := 0
	for err := range errs {
		if n == 0 {
			t.Errorf("PutWrites: %v", err)
		}
		n++
	}
	if n > 0 {
		t.Fatalf("%d of %d concurrent PutWrites failed", n, workers*rounds)
	}
	tu, err := s.GetTuple(ctx, cfg)
	if err != nil || len(tu.PendingWrites) != 4 {
		t.Fatalf("pending writes after the storm: %v %v", tu, err)
	}
}
