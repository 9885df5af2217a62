// Package pgdrain waits for the transactions of a PostgreSQL database that
// began before a moment to end: what an erasure needs when writers check
// their keys in a key table of another database (binding.Fence).
package pgdrain

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Querier is what Wait reads the server's activity with.
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Wait returns once no session of the current database (other than the one
// it runs on) is inside a transaction that began before Wait was called,
// or with ctx's error (then naming how many still are).
func Wait(ctx context.Context, db Querier) error {
	var since time.Time
	if err := db.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&since); err != nil {
		return fmt.Errorf("drain writes: %w", err)
	}
	pause := 20 * time.Millisecond
	for {
		var n int
		err := db.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid() AND xact_start < $1`, since).Scan(&n)
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
