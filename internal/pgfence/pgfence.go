// Package pgfence holds Drain, which an erasure runs on PostgreSQL after
// destroying keys so that every write that found them live has committed
// or failed, for the checkpointer's and the store's drivers alike. The
// fences themselves reach a driver through its contract's seam
// (checkpointer.WriteFence, store.WriteFence), which it runs first in the
// write's batch or transaction.
package pgfence

import (
	"context"
	"fmt"
	"time"

	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/internal/pgdb"
)

// Querier is what Drain reads the server's activity with.
type Querier = pgdb.Querier

// Drain returns once every write that may have found a destroyed key live
// has committed or failed. With the key table in the data's database the
// keys' deletion already waited for them (their fence holds the key rows),
// so it returns at once; otherwise it waits until no session of the
// database (other than its own) is inside a transaction that began before
// the call, or returns ctx's error naming how many still are.
func Drain(ctx context.Context, c binding.Codec, db Querier) error {
	if c.FencesInSQL() {
		return nil
	}
	var since time.Time
	if err := db.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&since); err != nil {
		return fmt.Errorf("drain writes: %w", err)
	}
	pause := 20 * time.Millisecond
	for {
		var n int
		err := db.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend' AND xact_start < $1`, since).Scan(&n)
		if err != nil {
			return fmt.Errorf("drain writes: %w", err)
		}
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("drain writes: %d transactions older than the erasure are still open: %w", n, ctx.Err())
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}
