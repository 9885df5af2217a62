package pgaudit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/pgaudit"
	"github.com/memvault/memvault/internal/pgmigrate"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// TestSetupTx creates the trail inside a caller's transaction: rolled
// back, nothing of it exists (schema, table, migration records);
// committed, the trail takes and returns records and Setup finds it set up.
func TestSetupTx(t *testing.T) {
	ctx := context.Background()
	pool, schema := pgtest.Schema(t)
	apart := schema + "_tx"
	t.Cleanup(func() {
		_, _ = pool.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+pgx.Identifier{apart}.Sanitize()+` CASCADE`)
	})
	count := func(q interface {
		QueryRow(context.Context, string, ...any) pgx.Row
	}, s string) int {
		t.Helper()
		var n int
		if err := q.QueryRow(ctx, `SELECT count(*) FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace
WHERE ns.nspname = $1 AND c.relname IN ('memvault_audit', 'memvault_audit_migrations')`, s).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, s := range []string{schema, apart} {
		tb, err := pgaudit.New(pool, pgaudit.Options{Schema: s})
		if err != nil {
			t.Fatal(err)
		}
		if err := tb.SetupTx(ctx, nil); !errors.Is(err, pgaudit.ErrNilTx) {
			t.Fatalf("SetupTx(nil) = %v, want ErrNilTx", err)
		}
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := tb.SetupTx(ctx, tx); err != nil {
			t.Fatal(err)
		}
		if n := count(tx, s); n != 2 {
			t.Fatalf("schema %s: %d tables inside the transaction, want 2", s, n)
		}
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		if n := count(pool, s); n != 0 {
			t.Fatalf("schema %s: %d tables after rollback, want none", s, n)
		}
		if s == apart {
			var exists bool
			if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, apart).Scan(&exists); err != nil || exists {
				t.Fatalf("schema %s after rollback: exists %v, %v", apart, exists, err)
			}
		}

		if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return tb.SetupTx(ctx, tx) }); err != nil {
			t.Fatal(err)
		}
		if n := count(pool, s); n != 2 {
			t.Fatalf("schema %s: %d tables after commit, want 2", s, n)
		}
		v, err := pgmigrate.Versions(ctx, pool, s, "memvault_audit_migrations")
		if err != nil || v["memvault_audit_migrations"] != 8 {
			t.Fatalf("schema %s: versions %v, %v; want v8 (the trail, its link, the pending records, their ids in the trail and its unique index, the pending records' (at, id) index, "+
				"the batch rows of the trail and of the pending records, the rows' first sequence numbers' unique index)", s, v, err)
		}
		if err := tb.Setup(ctx); err != nil {
			t.Fatalf("Setup after SetupTx: %v", err)
		}
		rec := audit.Record{Seq: 1, Time: time.Unix(1, 0).UTC(), Principal: "p", Op: "put", Target: "t", Subject: "s", KeyID: "k", Link: "l", MAC: "m"}
		if err := tb.Append(ctx, func(last *audit.Record) ([]audit.Record, error) {
			if last != nil {
				return nil, errors.New("a fresh trail has a last record")
			}
			return []audit.Record{rec}, nil
		}); err != nil {
			t.Fatal(err)
		}
		got, err := tb.Page(ctx, 0, 10)
		if err != nil || len(got) != 1 || got[0] != rec {
			t.Fatalf("Page = %+v, %v; want [%+v]", got, err, rec)
		}
	}
}
