package durable_test

import (
	"context"
	"iter"
	"slices"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/durable"
)

// rowThreadLister is engine.Saver's RowThreadIDs, which vault.Forget looks
// for under a saver's wrappers.
type rowThreadLister interface {
	RowThreadIDs(ctx context.Context) iter.Seq2[string, error]
}

// TestRowThreadIDsAfterQueues (session 28 review): a durable saver lists
// the threads holding any row, as its inner saver does, after its queues
// are written: a thread whose only row is a pending write still queued
// when the listing is asked for is among them. Before, a durable saver
// had no RowThreadIDs and Forget fell back to ListThreads, which misses it
// (vault's TestReviewS28ForgetThreadWithOnlyWritesDurable).
func TestRowThreadIDsAfterQueues(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []durable.Mode{durable.Async, durable.Exit} {
		t.Run(mode.String(), func(t *testing.T) {
			s := wrap(t, newSQLite(t, ""), durable.Options{Mode: mode})
			var rt any = s
			l, ok := rt.(rowThreadLister)
			if !ok {
				t.Fatal("a durable saver over a saver listing row threads does not list them (RowThreadIDs)")
			}
			cfg := checkpointer.Config{ThreadID: "writes-only", CheckpointID: checkpointer.NewID(0)}
			if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "notes", Value: "pending"}}, "task-1", ""); err != nil {
				t.Fatal(err)
			}
			var ids []string
			for id, err := range l.RowThreadIDs(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			if !slices.Equal(ids, []string{"writes-only"}) {
				t.Errorf("RowThreadIDs = %q; want [writes-only] (its pending write queued before the listing)", ids)
			}
		})
	}
}
