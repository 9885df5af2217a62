package pgaudit_test

import (
	"strings"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// TestReadRecordInReadStatement: an audited read alone in flight inserts
// its pending record in the statement that reads (one round trip, one
// commit for both), a listing of a page too: a trigger on the pending
// table keeps current_query() of each insert, which is the read's
// statement. A listing without a limit, whose rows cannot all be held
// until a commit, commits its record by itself first. Before session 28
// every read's record was an INSERT of its own (the readers' group).
func TestReadRecordInReadStatement(t *testing.T) {
	pool := pgtest.Pool(t)
	e := inTx(t, pool)
	ctx := t.Context()
	exec := func(sql string) {
		t.Helper()
		if _, err := pool.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(1), ChannelValues: map[string]any{"a": "1"}, ChannelVersions: map[string]string{"a": "1"}}
	if _, err := e.Inner.Put(ctx, checkpointer.Config{ThreadID: "r"}, cp, checkpointer.Metadata{}, map[string]string{"a": "1"}); err != nil {
		t.Fatal(err)
	}
	exec(`CREATE TABLE seen_ (n serial, q text)`)
	exec(`CREATE FUNCTION seen_f() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN INSERT INTO seen_ (q) VALUES (current_query()); RETURN NEW; END$$`)
	exec(`CREATE TRIGGER seen_t AFTER INSERT ON memvault_audit_pending FOR EACH ROW EXECUTE FUNCTION seen_f()`)

	if tp, err := e.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "r"}); err != nil || tp == nil {
		t.Fatalf("GetTuple = %v, %v", tp, err)
	}
	if tp, err := e.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "r", CheckpointID: cp.ID}); err != nil || tp == nil {
		t.Fatalf("GetTuple by id = %v, %v", tp, err)
	}
	for _, opt := range []checkpointer.ListOptions{{Limit: 10}, {}} {
		for _, err := range e.Saver.List(ctx, &checkpointer.Config{ThreadID: "r"}, opt) {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	rows, err := pool.Query(ctx, `SELECT q FROM seen_ ORDER BY n`)
	if err != nil {
		t.Fatal(err)
	}
	var qs []string
	for rows.Next() {
		var q string
		if err := rows.Scan(&q); err != nil {
			t.Fatal(err)
		}
		qs = append(qs, q)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(qs) != 4 {
		t.Fatalf("%d pending rows inserted, want 4 (one a read)", len(qs))
	}
	for i, what := range []string{"get_tuple", "get_tuple by id", "list of 10"} {
		if !strings.Contains(qs[i], "memvault_audit_pending") || !strings.Contains(qs[i], "checkpoint_id") {
			t.Errorf("%s: its record was inserted by %q, not by the read's statement", what, qs[i])
		}
	}
	if strings.Contains(qs[3], "checkpoint_id") {
		t.Errorf("an unbounded listing's record was inserted by its query %q (it holds its rows until the commit)", qs[3])
	}
}

// TestReadRecordsOnlyOnOwnConnections: a pgsaver on a caller's
// transaction does not carry reads' records (the record would commit
// with the caller's transaction, after the read returned, or never); on
// its own pool it does.
func TestReadRecordsOnlyOnOwnConnections(t *testing.T) {
	pool := pgtest.Pool(t)
	ctx := t.Context()
	own, err := pgsaver.New(pool, pgsaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !own.RecordsReadsInTx() {
		t.Error("a pgsaver on its pool does not record reads in their statements")
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	bound, err := pgsaver.New(tx, pgsaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if bound.RecordsReadsInTx() {
		t.Error("a pgsaver bound to a caller's transaction records reads in it")
	}
}
