package sqliteaudit

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/audittest"
	"github.com/memvault/memvault/internal/sqlitedb"
)

// TestPendingRowsSurviveClusteredMigration: pending records a build
// before migration 05 left in its pending table (a killed process's
// writes) are in the table that migration makes, with their MACs, and
// are chained once, each, by the next chainer.
func TestPendingRowsSurviveClusteredMigration(t *testing.T) {
	ctx := audit.WithPrincipal(context.Background(), "migrate")
	path, db := beforeClusteredMigration(t)
	// Pending rows as the build before makes them: a trail over a table
	// of that schema (its statements name no migration-05 feature).
	old := &Table{db: db}
	tr, err := audittest.InTxTrail(old)
	if err != nil {
		t.Fatal(err)
	}
	targets := []string{"t1", "t2", "t3"}
	for _, target := range targets {
		row, ok, err := tr.RecordInTx(ctx, audit.Entry{Op: audit.OpCheckpointWrite, Target: target})
		if err != nil || !ok {
			t.Fatalf("RecordInTx: %v, %v", ok, err)
		}
		if err := db.Write(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO memvault_audit_pending (id, at, principal, op, target, subject, key_id, mac) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, row.Values...)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}

	tb, err := Open(ctx, path) // migrates to 05
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	var withoutRowid int
	if err := db.Writer().QueryRowContext(ctx,
		`SELECT count(*) FROM sqlite_schema WHERE name = 'memvault_audit_pending' AND sql LIKE '%WITHOUT ROWID%'`).Scan(&withoutRowid); err != nil {
		t.Fatal(err)
	}
	if withoutRowid != 1 {
		t.Fatal("memvault_audit_pending is not a WITHOUT ROWID table after migration 05")
	}
	tr2, err := audittest.InTxTrail(tb)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr2.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	if err := tr2.Records(ctx, audit.Filter{}, func(r audit.Record) error {
		if r.PendingID == "" {
			t.Errorf("record %d (%s %s) was not chained from a pending row", r.Seq, r.Op, r.Target)
		}
		got[r.Target]++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, target := range targets {
		if got[target] != 1 {
			t.Errorf("%s: %d records, want 1", target, got[target])
		}
	}
	if len(got) != len(targets) {
		t.Errorf("records of %v, want %v", got, targets)
	}
	if _, err := tr2.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := db.Writer().QueryRowContext(ctx, `SELECT count(*) FROM memvault_audit_pending`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d pending rows left after Flush", left)
	}
}

// beforeClusteredMigration is a trail file (path) migrated to version 04,
// the schema before migration 05 rebuilt the pending table, and its
// handle, closed at the test's end.
func beforeClusteredMigration(t *testing.T) (string, *sqlitedb.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data.db")
	db, err := sqlitedb.Open(path, sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background(), "audit", migrations[:5]); err != nil { // 00–04
		t.Fatal(err)
	}
	return path, db
}
