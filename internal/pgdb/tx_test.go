package pgdb_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/internal/pgdb"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestRunTx: on a pool, a connection (pgx's, the pool's) and a caller's
// transaction, a Tx whose BEGIN and COMMIT travel with its batches keeps
// all its rows or none — fn failing after a batch, the last batch failing
// midway, a statement of its own first — and leaves no transaction open
// but the caller's; nothing runs in it once the last batch committed.
func TestRunTx(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(ctx, "CREATE TABLE t (k text PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	errFn := errors.New("fn failed")
	insert := func(tx *pgdb.Tx, k string, last bool, more ...string) error {
		b, err := tx.Batch(ctx)
		if err != nil {
			return err
		}
		b.Queue("INSERT INTO t VALUES ($1)", k)
		for _, sql := range more {
			b.Queue(sql)
		}
		return tx.Send(ctx, b, last)
	}
	cases := []struct {
		name    string
		fn      func(tx *pgdb.Tx, k string) error
		wantErr bool
		kept    bool
	}{
		{"batches", func(tx *pgdb.Tx, k string) error {
			if err := insert(tx, k, false); err != nil {
				return err
			}
			if err := insert(tx, k+"-2", true); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "INSERT INTO t VALUES ($1)", k+"-3"); !errors.Is(err, pgx.ErrTxClosed) {
				t.Errorf("a statement after the last batch: %v, want pgx.ErrTxClosed", err)
			}
			return nil
		}, false, true},
		{"fn fails", func(tx *pgdb.Tx, k string) error {
			if err := insert(tx, k, false); err != nil {
				return err
			}
			return errFn
		}, true, false},
		{"last batch fails", func(tx *pgdb.Tx, k string) error {
			return insert(tx, k, true, "SELECT 1/0")
		}, true, false},
		{"statement first", func(tx *pgdb.Tx, k string) error {
			if _, err := tx.Exec(ctx, "INSERT INTO t VALUES ($1)", k); err != nil {
				return err
			}
			return insert(tx, k+"-2", false)
		}, false, true},
	}
	for _, kind := range []string{"pool", "conn", "pool conn", "caller's tx"} {
		for _, c := range cases {
			k := kind + "/" + c.name
			var db pgdb.DB = pool
			var caller pgx.Tx
			switch kind {
			case "conn":
				db = conn.Conn()
			case "pool conn":
				db = conn
			case "caller's tx":
				if caller, err = conn.Begin(ctx); err != nil {
					t.Fatal(err)
				}
				db = caller
			}
			err := pgdb.RunTx(ctx, db, func(tx *pgdb.Tx) error { return c.fn(tx, k) })
			if (err != nil) != c.wantErr {
				t.Errorf("%s: RunTx = %v, want error %v", k, err, c.wantErr)
			}
			if caller != nil {
				if st := conn.Conn().PgConn().TxStatus(); st != 'T' {
					t.Errorf("%s: the caller's transaction is in status %c, want T (usable)", k, st)
				}
				if err := caller.Commit(ctx); err != nil {
					t.Fatalf("%s: commit the caller's transaction: %v", k, err)
				}
			}
			if st := conn.Conn().PgConn().TxStatus(); st != 'I' {
				t.Errorf("%s: connection left in status %c", k, st)
			}
			var n int
			if err := pool.QueryRow(ctx, "SELECT count(*) FROM t WHERE k LIKE $1 || '%'", k).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int{true: 2, false: 0}[c.kept]; n != want {
				t.Errorf("%s: %d rows kept, want %d", k, n, want)
			}
		}
	}
}
