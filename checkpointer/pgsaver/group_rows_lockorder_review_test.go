package pgsaver

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/checkpointer"
)

// TestReviewWriteGroupRowsLockOrder: the rows statement locks the
// parents of its puts FOR KEY SHARE; a remover locks the rows it removes
// FOR UPDATE in key order (queries.lock). When the puts' parents are
// locked in another order — here the group's op order, thread "db"
// before "da" — a remover holding "da"'s parent and then locking "db"'s
// deadlocks with the group (40P01 to one of them, after
// deadlock_timeout). Locked in key order, as the removers lock, they
// cannot deadlock: the put waits for the remover, holding nothing it
// wants.
func TestReviewWriteGroupRowsLockOrder(t *testing.T) {
	s, pool, _ := tracedSaver(t)
	ctx := t.Context()
	for _, th := range []string{"da", "db"} {
		if err := s.driver().Put(ctx, rowsPut(th, "p", "", "1", `{}`)); err != nil {
			t.Fatal(err)
		}
	}
	// The group's connection never runs the deadlock check first: when
	// there is a deadlock, the remover is told.
	cfg := pool.Config().Copy()
	cfg.ConnConfig.RuntimeParams["deadlock_timeout"] = "60s"
	gpool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer gpool.Close()
	d := &driver{db: gpool, q: &s.q, own: true, topo: s.topo}

	r, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Rollback(ctx)
	var rpid int
	if err := r.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&rpid); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Exec(ctx, `SELECT 1 FROM checkpoints WHERE thread_id = 'da' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	done := make(chan []error)
	go func() {
		done <- d.WriteGroup(ctx, []checkpointer.GroupOp{
			{Put: rowsPut("db", "c", "p", "2", `{}`)},
			{Put: rowsPut("da", "c", "p", "2", `{}`)},
		})
	}()
	for { // until the group waits for r
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))`, rpid).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
	}
	_, lockErr := r.Exec(ctx, `SELECT 1 FROM checkpoints WHERE thread_id = 'db' FOR UPDATE`)
	if lockErr != nil {
		t.Errorf("the remover locking in key order: %v", lockErr)
	} else if err := r.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for i, err := range <-done {
		if err != nil {
			t.Errorf("op %d: %v", i, err)
		}
	}
}
