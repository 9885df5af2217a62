package sqliteaudit_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/audittest"
	"github.com/memvault/memvault/audit/sqliteaudit"
)

// TestConformance runs the audit table suite on a SQLite file, tampering
// through SQL on its memvault_audit table (a connection of its own, as
// whoever can write the file would).
func TestConformance(t *testing.T) {
	audittest.RunTable(t, func(t *testing.T) audittest.Backend {
		path := filepath.Join(t.TempDir(), "audit.db")
		tb, err := sqliteaudit.Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tb.Close() })
		raw, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { raw.Close() })
		return audittest.Backend{Table: tb, Put: func(t *testing.T, rs []audit.Record) { put(t, raw, rs) }}
	})
}

// put replaces the table's rows with rs in one transaction.
func put(t *testing.T, db *sql.DB, rs []audit.Record) {
	t.Helper()
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM memvault_audit`); err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if _, err := tx.ExecContext(ctx, `INSERT INTO memvault_audit (seq, at, principal, op, target, subject, key_id, link, mac) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.Seq, r.Time.UTC().Format(time.RFC3339Nano), r.Principal, r.Op, r.Target, r.Subject, r.KeyID, r.Link, r.MAC); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}
