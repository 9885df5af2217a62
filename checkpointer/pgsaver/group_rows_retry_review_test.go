package pgsaver

import (
	"context"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/checkpointer"
)

// batchRouter is a pool whose first batch runs on connection a and its
// second on connection b (a pool hands a retry any idle connection).
type batchRouter struct {
	*pgxpool.Pool
	n    int
	a, b *pgx.Conn
}

func (r *batchRouter) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	r.n++
	switch r.n {
	case 1:
		return r.a.SendBatch(ctx, b)
	case 2:
		return r.b.SendBatch(ctx, b)
	}
	return r.Pool.SendBatch(ctx, b)
}

// TestReviewWriteGroupRowsRetryOtherConn: the rows batch fails with a
// serialization failure (40001, which pgretry runs again) and its retry
// gets another connection of the pool. The retry must store the rows;
// it fails instead with "prepared statement does not exist" (26000),
// since sendRows sends again the pgx.Batch it already sent, whose
// queued queries keep the statement description of the first
// connection, and the group falls back to one statement per op.
func TestReviewWriteGroupRowsRetryOtherConn(t *testing.T) {
	s, pool, log := tracedSaver(t)
	ctx := t.Context()
	if err := s.driver().Put(ctx, rowsPut("d", "c1", "", "1", `{}`)); err != nil {
		t.Fatal(err)
	}
	cfgA := pool.Config().ConnConfig.Copy()
	cfgA.RuntimeParams["default_transaction_isolation"] = "repeatable read"
	a, err := pgx.ConnectConfig(ctx, cfgA)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(ctx)
	b, err := pgx.ConnectConfig(ctx, pool.Config().ConnConfig.Copy())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx)
	d := &driver{db: &batchRouter{Pool: pool, a: a, b: b}, q: &s.q, own: true, topo: s.topo}

	x, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Rollback(ctx)
	if _, err := x.Exec(ctx, `UPDATE checkpoints SET metadata = '{"by": "x"}' WHERE thread_id = 'd' AND checkpoint_id = 'c1'`); err != nil {
		t.Fatal(err)
	}
	log.Take()
	done := make(chan []error)
	go func() {
		done <- d.WriteGroup(ctx, []checkpointer.GroupOp{
			{Put: rowsPut("d", "c1", "", "1", `{"by": "group"}`)},
			{Put: rowsPut("e", "c1", "", "1", `{}`)},
		})
	}()
	// Wait until the rows statement waits for x's row lock, then commit
	// x: the repeatable read statement fails with 40001.
	for {
		var waiting bool
		if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock')`, a.PgConn().PID()).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			break
		}
	}
	if err := x.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for i, err := range <-done {
		if err != nil {
			t.Errorf("op %d: %v", i, err)
		}
	}
	sent := log.Take()
	if n := len(slices.DeleteFunc(slices.Clone(sent), func(q string) bool { return q != s.q.putCkptRows })); n != 2 {
		t.Errorf("the rows' statement was sent %d times, want 2 (a try and its retry)", n)
	}
	if slices.Contains(sent, s.q.putCkpt) {
		t.Errorf("the rows' retry on another connection failed: the group fell back to one statement per put")
	}
}
