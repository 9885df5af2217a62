package pgstore_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/pgstore"
)

// TestBatchOppositeOrdersNoDeadlock: batches putting the same keys in
// opposite orders run concurrently without any failing: rows are locked in
// key order (and an aborted implicit transaction would be run again).
func TestBatchOppositeOrdersNoDeadlock(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t, pgstore.Options{})
	var ops []store.Op
	for i := range 20 {
		ops = append(ops, store.PutOp{Namespace: store.Namespace{"dl"}, Key: fmt.Sprint("k", i), Value: map[string]any{"i": i}})
	}
	rev := slices.Clone(ops)
	slices.Reverse(rev)
	const workers, rounds = 16, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			batch := ops
			if w%2 == 1 {
				batch = rev
			}
			for range rounds {
				if _, err := s.Batch(ctx, batch); err != nil {
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
			t.Errorf("Batch: %v", err)
		}
		n++
	}
	if n > 0 {
		t.Fatalf("%d of %d concurrent batches failed", n, workers*rounds)
	}
}
