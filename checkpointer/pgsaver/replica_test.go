package pgsaver_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// TestReadReplica: a Saver opened on a hot standby's pool (no Setup: the
// standby is read-only) serves GetTuple, List and ListThreads with exactly
// the primary's results once the standby has replayed the writes, encrypted
// values included (they are bound to their location, not to the server),
// and refuses writes with PostgreSQL's read-only error. This is the
// read-replica deployment the README's scale-out section describes.
func TestReadReplica(t *testing.T) {
	ctx := context.Background()
	standby := pgtest.StartStandby(t)
	testPool, schema := pgtest.Schema(t)
	// Commits as a durable primary's are (the test cluster's default is
	// asynchronous, which delays streaming by up to wal_writer_delay), so
	// that the lag logged below is what a reader of a replica sees.
	cfg := testPool.Config()
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "on"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	opts := pgsaver.Options{Schema: schema, Serde: encrypted(t)}
	primary, err := pgsaver.New(pool, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := primary.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	for th := range 3 {
		thread := fmt.Sprintf("user-%d", th)
		var prev *checkpointer.Checkpoint
		for n := 1; n <= 5; n++ {
			cp, nv := step(n, prev, map[string]any{"messages": fmt.Sprintf("message %d of %s", n, thread), "step": n})
			cfg, err := primary.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, checkpointer.Metadata{"step": n}, nv)
			if err != nil {
				t.Fatal(err)
			}
			if err := primary.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "messages", Value: "pending"}}, "task", ""); err != nil {
				t.Fatal(err)
			}
			prev = cp
		}
	}
	lag, err := standby.CatchUp(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("standby replayed the writes %v after the last commit", lag.Round(10*time.Microsecond))

	rpool, err := pgxpool.New(ctx, standby.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer rpool.Close()
	replica, err := pgsaver.New(rpool, opts)
	if err != nil {
		t.Fatal(err)
	}
	for th := range 3 {
		cfg := checkpointer.Config{ThreadID: fmt.Sprintf("user-%d", th)}
		want, err := primary.GetTuple(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := replica.GetTuple(ctx, cfg)
		if err != nil {
			t.Fatalf("replica GetTuple: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: replica tuple %+v, primary %+v", cfg.ThreadID, got, want)
		}
		wantList, gotList := collect(t, primary, cfg), collect(t, replica, cfg)
		if len(wantList) != 5 || !reflect.DeepEqual(gotList, wantList) {
			t.Errorf("%s: replica listed %d tuples, primary %d, or they differ", cfg.ThreadID, len(gotList), len(wantList))
		}
	}
	var threads []checkpointer.ThreadInfo
	for ti, err := range replica.ListThreads(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		threads = append(threads, ti)
	}
	if len(threads) != 3 {
		t.Errorf("replica ListThreads: %+v", threads)
	}

	cp, nv := step(9, nil, map[string]any{"messages": "written to a replica"})
	_, err = replica.Put(ctx, checkpointer.Config{ThreadID: "user-0"}, cp, nil, nv)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "25006" { // read_only_sql_transaction
		t.Errorf("Put on the replica: %v, want SQLSTATE 25006", err)
	}
}

// collect lists a thread's checkpoints, newest first.
func collect(t *testing.T, s *pgsaver.Saver, cfg checkpointer.Config) []*checkpointer.Tuple {
	t.Helper()
	var out []*checkpointer.Tuple
	for tu, err := range s.List(context.Background(), &cfg, checkpointer.ListOptions{Limit: 10}) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tu)
	}
	return out
}
