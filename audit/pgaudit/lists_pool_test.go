package pgaudit_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// TestAuditedListsPoolSize: audited listings as many as the pool's
// connections, or more, all finish. A listing's record commits through
// the same pool as its rows are read; when a listing held its connection
// (its first row read) while it waited for its record, listings that
// held every connection waited for records that waited for a connection:
// a deadlock, for good without a deadline (found by BenchmarkAuditedOps
// list10 at 16 in flight on the default pool of 4).
func TestAuditedListsPoolSize(t *testing.T) {
	cfg, err := pgxpool.ParseConfig(pgtest.SchemaDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	env := inTx(t, pool)
	ctx := audit.WithPrincipal(t.Context(), "lister")
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(1), TS: time.Now(),
		ChannelValues: map[string]any{"a": "x"}, ChannelVersions: map[string]string{"a": "1"}}
	if _, err := env.Inner.Put(ctx, checkpointer.Config{ThreadID: "listed"}, cp, checkpointer.Metadata{}, map[string]string{"a": "1"}); err != nil {
		t.Fatal(err)
	}
	// Deadlocked listings end at the deadline with its error.
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for round := range 20 {
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			wg.Go(func() {
				for _, err := range env.Saver.List(ctx, &checkpointer.Config{ThreadID: "listed"}, checkpointer.ListOptions{}) {
					if err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: 8 audited listings on a pool of 2: %v", round, err)
		}
	}
}
