package pgaudit_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/audittest"
	"github.com/memvault/memvault/audit/pgaudit"
	"github.com/memvault/memvault/checkpointer"
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
			var pending *string // NULL for none
			if r.PendingID != "" {
				pending = &r.PendingID
			}
			if _, err := tx.Exec(ctx, `INSERT INTO memvault_audit (seq, at, principal, op, target, subject, key_id, link, mac, pending_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
				r.Seq, r.Time, r.Principal, r.Op, r.Target, r.Subject, r.KeyID, r.Link, r.MAC, pending); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPending runs the pending records' suite on PostgreSQL: replayed and
// withheld pending rows, inserted and deleted through SQL
// (audittest.RunPending).
func TestPending(t *testing.T) {
	audittest.RunPending(t, func(t *testing.T) audittest.PendingBackend {
		pool := pgtest.Pool(t)
		tb, err := pgaudit.New(pool, pgaudit.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := tb.Setup(t.Context()); err != nil {
			t.Fatal(err)
		}
		exec := func(t *testing.T, stmt string, args ...any) {
			t.Helper()
			if _, err := pool.Exec(context.Background(), stmt, args...); err != nil {
				t.Fatal(err)
			}
		}
		return audittest.PendingBackend{
			Backend: audittest.Backend{Table: tb, Put: func(t *testing.T, rs []audit.Record) { put(t, pool, rs) }},
			InsertRow: func(t *testing.T, row *checkpointer.RecordRow) {
				params := make([]string, len(row.Values))
				for i := range params {
					params[i] = fmt.Sprintf("$%d", i+1)
				}
				exec(t, `INSERT INTO `+row.Table+` (`+strings.Join(row.Columns, ", ")+`) VALUES (`+strings.Join(params, ", ")+`)`, row.Values...)
			},
			DeletePending: func(t *testing.T, id string) { exec(t, `DELETE FROM memvault_audit_pending WHERE id = $1`, id) },
		}
	})
}
