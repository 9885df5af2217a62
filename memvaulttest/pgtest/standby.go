package pgtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Standby is a hot standby of the test cluster: a second server that
// replays the primary's write-ahead log by streaming replication and serves
// read-only queries, as a read replica does in production.
type Standby struct {
	// DSN connects to the standby (database postgres, default search_path).
	DSN     string
	primary *pgxpool.Pool
	standby *pgxpool.Pool
}

// StartStandby starts a hot standby of the throwaway cluster (taken by
// pg_basebackup, then streaming), stopped and removed when t ends. It skips t
// under TEST_DATABASE_URL, whose server pgtest cannot clone.
func StartStandby(t testing.TB) *Standby {
	t.Helper()
	e := database(t)
	if e.cluster == nil {
		t.Skipf("pgtest: no standby of %s (a throwaway cluster is needed)", EnvDatabaseURL)
	}
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	c, err := startStandby(ctx, e.cluster)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.stop(); err != nil {
			t.Errorf("pgtest: stop standby: %v", err)
		}
	})
	pool, err := pgxpool.New(ctx, c.dsn)
	if err == nil {
		err = pool.Ping(ctx)
	}
	if err != nil {
		t.Fatalf("pgtest: connect to the standby: %v", err)
	}
	t.Cleanup(pool.Close)
	return &Standby{DSN: c.dsn, primary: e.admin, standby: pool}
}

// CatchUp waits until the standby has replayed everything the primary had
// written when CatchUp was called, commits included, and returns how long
// that took: the replication lag a reader of the standby sees at that
// moment.
//
// The target is the primary's insert position, not pg_current_wal_lsn(),
// which is where WAL has been written to: the test cluster commits
// asynchronously (synchronous_commit off), so a commit record may wait in
// the WAL buffers, beyond that position, until the WAL writer's next round
// (wal_writer_delay, later on a busy machine), and a standby that reached
// it had not seen the commit: the transaction's rows were not visible
// there yet. The standby only receives WAL the primary flushed, so CatchUp
// then commits a transaction of its own synchronously, which flushes every
// record before it.
func (s *Standby) CatchUp(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	var target string
	err := pgx.BeginFunc(ctx, s.primary, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL synchronous_commit = on`); err != nil {
			return err
		}
		// An xid, so that the commit writes a record and flushes.
		return tx.QueryRow(ctx, `SELECT pg_current_wal_insert_lsn()::text FROM pg_current_xact_id()`).Scan(&target)
	})
	if err != nil {
		return 0, fmt.Errorf("pgtest: primary WAL position: %w", err)
	}
	for {
		var done bool
		err := s.standby.QueryRow(ctx, `SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn`, target).Scan(&done)
		if err != nil {
			return 0, fmt.Errorf("pgtest: standby replay position: %w", err)
		}
		if done {
			return time.Since(start), nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("pgtest: standby did not replay %s: %w", target, ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
}
