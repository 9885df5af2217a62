package pgdb_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/internal/pgdb"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// TestSeq: rows come decoded in order and a loop may stop early; a
// decoding error ends the rows, and an error the server sends after rows
// (division by zero at the third row) comes last.
func TestSeq(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	one := func(rows pgx.Rows) (int, error) {
		var n int
		err := rows.Scan(&n)
		return n, err
	}
	var got []int
	for n, err := range pgdb.Seq(ctx, pool, `SELECT generate_series(1, $1::int)`, []any{5}, one) {
		if err != nil {
			t.Fatal(err)
		}
		if got = append(got, n); n == 3 {
			break
		}
	}
	if len(got) != 3 || got[2] != 3 {
		t.Errorf("got %v, want [1 2 3]", got)
	}
	var last error
	for _, err := range pgdb.Seq(ctx, pool, `SELECT 6 / (3 - g) FROM generate_series(1, 3) g`, nil, one) {
		last = err
	}
	if last == nil {
		t.Error("the late division by zero was not yielded")
	}
	bad := errors.New("bad row")
	count := 0
	for _, err := range pgdb.Seq(ctx, pool, `SELECT generate_series(1, 3)`, nil, func(pgx.Rows) (int, error) { return 0, bad }) {
		count++
		if !errors.Is(err, bad) {
			t.Errorf("err = %v, want the decoding error", err)
		}
	}
	if count != 1 {
		t.Errorf("%d yields after a decoding error, want 1", count)
	}
}

// TestSendQueuedDryRun: a dry run's statements run and return their
// results, and nothing they changed stays; the transaction goes on.
func TestSendQueuedDryRun(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(ctx, "CREATE TABLE d (k text PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	err := pgdb.RunTx(ctx, pool, func(tx *pgdb.Tx) error {
		var deleted int
		for _, dry := range []bool{true, false} {
			if err := tx.SendQueued(ctx, !dry, dry, func(b *pgx.Batch) {
				b.Queue(`INSERT INTO d VALUES ('a'), ('b')`)
				b.Queue(`WITH x AS (DELETE FROM d WHERE k = 'a' RETURNING 1) SELECT count(*) FROM x`).QueryRow(func(r pgx.Row) error {
					return r.Scan(&deleted)
				})
			}); err != nil {
				return err
			}
			if deleted != 1 {
				t.Errorf("dry run %v: deleted %d, want 1", dry, deleted)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	rows, _ := pool.Query(ctx, `SELECT k FROM d ORDER BY k`)
	keys, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(keys) != 1 || keys[0] != "b" {
		t.Errorf("rows %v (%v), want [b]: the dry run's insert stayed or the real one did not", keys, err)
	}
}
