package pgaudit_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/audittest"
	"github.com/memvault/memvault/audit/pgaudit"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestConformance runs the audit table suite on PostgreSQL (a schema per
// case), tampering through SQL on its memvault_audit table.
func TestConformance(t *testing.T) {
	audittest.RunTable(t, func(t *testing.T) audittest.Backend {
		pool := pgtest.Pool(t)
		tb, err := pgaudit.New(pool, pgaudit.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := tb.Setup(t.Context()); err != nil {
			t.Fatal(err)
		}
		return audittest.Backend{Table: tb, Put: func(t *testing.T, rs []audit.Record) { put(t, pool, rs) }}
	})
}

// put replaces the table's rows with rs in one transaction.
func put(t *testing.T, pool *pgxpool.Pool, rs []audit.Record) {
	t.Helper()
	err := pgx.BeginFunc(context.Background(), pool, func(tx pgx.Tx) error {
		ctx := context.Background()
		if _, err := tx.Exec(ctx, `DELETE FROM memvault_audit`); err != nil {
			return err
		}
		for _, r := range rs {
			if _, err := tx.Exec(ctx, `INSERT INTO memvault_audit (seq, at, principal, op, target, subject, key_id, link, mac) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
				r.Seq, r.Time, r.Principal, r.Op, r.Target, r.Subject, r.KeyID, r.Link, r.MAC); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
