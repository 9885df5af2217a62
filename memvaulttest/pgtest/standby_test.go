package pgtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// TestCatchUpSeesAsyncCommit: a row committed asynchronously (the test
// cluster's default) is visible on the standby once CatchUp returns, even
// while the WAL writer sleeps. CatchUp used to wait for the primary's WAL
// write position, which the commit record lies beyond until the WAL writer
// writes it (wal_writer_delay later): the standby reached that position
// without the commit, and store/pgstore's TestReadReplica read nothing on
// the replica, 2 runs in 8 on a busy machine.
func TestCatchUpSeesAsyncCommit(t *testing.T) {
	ctx := context.Background()
	standby := pgtest.StartStandby(t)
	pool, schema := pgtest.Schema(t)
	// The WAL writer's longest sleep, so that an async commit waits in the
	// WAL buffers for as long as the test runs, as it does for a while on a
	// busy machine.
	setWriterDelay(t, pool, "10s")
	t.Cleanup(func() { setWriterDelay(t, pool, "") })
	if _, err := pool.Exec(ctx, `CREATE TABLE `+schema+`.t (n int)`); err != nil {
		t.Fatal(err)
	}
	// One async commit first, written by the WAL writer, which wakes it from
	// hibernation (where an async commit would wake it at once) into its
	// 10 s sleep.
	if _, err := pool.Exec(ctx, `INSERT INTO `+schema+`.t VALUES (0)`); err != nil {
		t.Fatal(err)
	}
	waitFlushed(t, pool)

	if _, err := pool.Exec(ctx, `INSERT INTO `+schema+`.t VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	if _, err := standby.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	rpool, err := pgxpool.New(ctx, standby.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer rpool.Close()
	var n int
	if err := rpool.QueryRow(ctx, `SELECT count(*) FROM `+schema+`.t`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("the standby has %d rows after CatchUp, want 2", n)
	}
}

// setWriterDelay sets the primary's wal_writer_delay ("" resets it).
func setWriterDelay(t *testing.T, pool *pgxpool.Pool, d string) {
	t.Helper()
	ctx := context.Background()
	stmt := `ALTER SYSTEM RESET wal_writer_delay`
	if d != "" {
		stmt = `ALTER SYSTEM SET wal_writer_delay = '` + d + `'`
	}
	if _, err := pool.Exec(ctx, stmt); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `SELECT pg_reload_conf()`); err != nil {
		t.Fatal(err)
	}
}

// waitFlushed waits until the primary has flushed every WAL record
// inserted so far, and then a little longer, for the WAL writer to settle
// into its sleep.
func waitFlushed(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		var done bool
		if err := pool.QueryRow(ctx, `SELECT pg_current_wal_flush_lsn() >= pg_current_wal_insert_lsn()`).Scan(&done); err != nil {
			t.Fatal(err)
		}
		if done {
			time.Sleep(100 * time.Millisecond)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}
