package pgsaver_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// tripCounter counts what a connection sends: each Query, Exec (BEGIN,
// COMMIT and SAVEPOINT included) and batch is one round trip.
type tripCounter struct{ n atomic.Int64 }

func (c *tripCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *tripCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (c *tripCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *tripCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (c *tripCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// TestRemovalRoundTrips: a prune is one round trip, a batch (with the
// implicit transaction's end, or in a caller's transaction). Any other
// removal that removes something is three round trips — the heads, the lock (with the transaction's BEGIN, or its
// SAVEPOINT in a caller's transaction) and the deletes (with the COMMIT,
// or the RELEASE) — on a connection of the saver's own and in a caller's
// transaction, and leaves no transaction open behind it. Each removal
// runs first on other threads, so that the statements are prepared (a
// first use prepares them, a round trip pgx does not trace as a query).
func TestRemovalRoundTrips(t *testing.T) {
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(pgtest.SchemaDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	var trips tripCounter
	cfg.Tracer = &trips
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	own, err := pgsaver.New(conn, pgsaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := own.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	chain := func(s *pgsaver.Saver, thread string) checkpointer.Config {
		t.Helper()
		last := checkpointer.Config{ThreadID: thread}
		var cp *checkpointer.Checkpoint
		for i := range 3 {
			var nv map[string]string
			cp, nv = step(i+1, cp, map[string]any{"a": i})
			if last, err = s.Put(ctx, last, cp, checkpointer.Metadata{"run_id": thread}, nv); err != nil {
				t.Fatal(err)
			}
		}
		return last
	}
	removals := []struct {
		name string
		fn   func(s *pgsaver.Saver, thread string) error
	}{
		{"Prune", func(s *pgsaver.Saver, thread string) error {
			chain(s, thread)
			trips.n.Store(0)
			return s.Prune(ctx, []string{thread}, checkpointer.PruneKeepLatest)
		}},
		{"DeleteForRuns", func(s *pgsaver.Saver, thread string) error {
			chain(s, thread)
			trips.n.Store(0)
			return s.DeleteForRuns(ctx, []string{thread})
		}},
		{"DeleteCheckpoint", func(s *pgsaver.Saver, thread string) error {
			last := chain(s, thread)
			trips.n.Store(0)
			return s.DeleteCheckpoint(ctx, last)
		}},
	}
	for _, r := range removals {
		for _, mode := range []string{"own connection", "caller's transaction"} {
			// In a caller's transaction, one saver over it for both runs:
			// the first asks whether the database is Citus.
			s := own
			var tx pgx.Tx
			if mode == "caller's transaction" {
				if tx, err = conn.Begin(ctx); err != nil {
					t.Fatal(err)
				}
				if s, err = pgsaver.New(tx, pgsaver.Options{}); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 2 {
				if err := r.fn(s, fmt.Sprintf("%s-%s-%d", r.name, mode, i)); err != nil {
					t.Fatalf("%s (%s): %v", r.name, mode, err)
				}
				n := trips.n.Load()
				want := byte('I')
				if tx != nil {
					want = 'T' // the caller's transaction goes on
				}
				if st := conn.PgConn().TxStatus(); st != want {
					t.Errorf("%s (%s) left the connection in transaction status %c, want %c", r.name, mode, st, want)
				}
				if want := map[bool]int64{false: 3, true: 1}[r.name == "Prune"]; i == 1 && n > want {
					t.Errorf("%s (%s): %d round trips, want %d", r.name, mode, n, want)
				}
			}
			if tx != nil {
				// The saver's planner setting for its own removals stays
				// out of the caller's transaction.
				var pcm string
				if err := tx.QueryRow(ctx, "SHOW plan_cache_mode").Scan(&pcm); err != nil || pcm != "auto" {
					t.Errorf("%s (%s): the caller's transaction has plan_cache_mode %q (%v), want auto", r.name, mode, pcm, err)
				}
				if err := tx.Commit(ctx); err != nil {
					t.Fatal(err)
				}
			}
			left := 0
			for _, err := range own.List(ctx, &checkpointer.Config{ThreadID: fmt.Sprintf("%s-%s-1", r.name, mode)}, checkpointer.ListOptions{}) {
				if err != nil {
					t.Fatal(err)
				}
				left++
			}
			if want := map[string]int{"Prune": 1, "DeleteForRuns": 0, "DeleteCheckpoint": 2}[r.name]; left != want {
				t.Errorf("%s (%s): %d checkpoints left, want %d", r.name, mode, left, want)
			}
		}
	}
}
