package sqliteaudit

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/audittest"
)

// TestUserTriggerSurvivesClusteredMigration (session 39, carried as
// "SQLite trail migration 05 drops user triggers"): migration 05 rebuilds
// memvault_audit_pending (a WITHOUT ROWID copy, then DROP TABLE of the
// old one), and DROP TABLE drops every trigger on the table: a trigger an
// operator made on it (here one copying each pending record's target into
// a table of their own) was gone after the upgrade, silently. It is kept:
// re-created from its text on the new table, and it fires there.
func TestUserTriggerSurvivesClusteredMigration(t *testing.T) {
	ctx := audit.WithPrincipal(context.Background(), "migrate")
	path, db := beforeClusteredMigration(t)
	const trigger = `CREATE TRIGGER "Ops Watch" AFTER INSERT ON Memvault_Audit_Pending BEGIN
	INSERT INTO ops_watch (target) VALUES (NEW.target);
END`
	const index = `CREATE UNIQUE INDEX "ops by mac" ON memvault_audit_pending (mac, id)`
	if err := db.Write(ctx, func(tx *sql.Tx) error {
		for _, stmt := range []string{`CREATE TABLE ops_watch (target TEXT NOT NULL)`, trigger, index} {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	tb, err := Open(ctx, path) // migrates to 05
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	var text string
	if err := db.Writer().QueryRowContext(ctx,
		`SELECT sql FROM sqlite_schema WHERE type = 'trigger' AND name = 'Ops Watch' AND tbl_name = 'Memvault_Audit_Pending'`).Scan(&text); err != nil {
		t.Fatalf("the user's trigger after migration 05: %v", err)
	}
	if text != trigger {
		t.Errorf("the user's trigger after migration 05:\n%s\nwant\n%s", text, trigger)
	}
	if err := db.Writer().QueryRowContext(ctx,
		`SELECT sql FROM sqlite_schema WHERE type = 'index' AND name = 'ops by mac' AND tbl_name = 'memvault_audit_pending'`).Scan(&text); err != nil {
		t.Fatalf("the user's index after migration 05: %v", err)
	}
	if text != index {
		t.Errorf("the user's index after migration 05:\n%s\nwant\n%s", text, index)
	}
	var withoutRowid int
	if err := db.Writer().QueryRowContext(ctx,
		`SELECT count(*) FROM sqlite_schema WHERE name = 'memvault_audit_pending' AND sql LIKE '%WITHOUT ROWID%'`).Scan(&withoutRowid); err != nil {
		t.Fatal(err)
	}
	if withoutRowid != 1 {
		t.Fatal("memvault_audit_pending is not a WITHOUT ROWID table after migration 05")
	}
	// It fires on the new table: a write's pending record reaches the
	// user's table.
	tr, err := audittest.InTxTrail(tb)
	if err != nil {
		t.Fatal(err)
	}
	row, ok, err := tr.RecordInTx(ctx, audit.Entry{Op: audit.OpCheckpointWrite, Target: "watched"})
	if err != nil || !ok {
		t.Fatalf("RecordInTx: %v, %v", ok, err)
	}
	if err := db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO memvault_audit_pending (id, at, principal, op, target, subject, key_id, mac) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, row.Values...)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var watched string
	if err := db.Writer().QueryRowContext(ctx, `SELECT target FROM ops_watch`).Scan(&watched); err != nil || watched != "watched" {
		t.Fatalf("the user's trigger did not fire on the migrated table: %q, %v", watched, err)
	}
	// Opening again migrates nothing and keeps the trigger once.
	tb2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	tb2.Close()
	var n int
	if err := db.Writer().QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'trigger'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d triggers after a second Open (%v), want the user's 1", n, err)
	}
}

// TestRowidTriggerRefusesClusteredMigration: a user's trigger on
// memvault_audit_pending that names NEW.rowid cannot work on the table
// migration 05 makes (WITHOUT ROWID): kept, it would fail every insert of
// a pending record, so every audited write. The migration fails instead,
// naming the trigger, and changes nothing: the file stays at migration 04
// with the trigger in place.
func TestRowidTriggerRefusesClusteredMigration(t *testing.T) {
	ctx := context.Background()
	path, db := beforeClusteredMigration(t)
	if err := db.Write(ctx, func(tx *sql.Tx) error {
		for _, stmt := range []string{`CREATE TABLE rows_seen (r INTEGER)`,
			`CREATE TRIGGER rows_seen AFTER INSERT ON memvault_audit_pending BEGIN INSERT INTO rows_seen VALUES (NEW.rowid); END`} {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	tb, err := Open(ctx, path)
	if err == nil {
		tb.Close()
		t.Fatal("Open migrated a trail whose pending table has a trigger naming NEW.rowid")
	}
	if !strings.Contains(err.Error(), `"rows_seen"`) {
		t.Errorf("the error does not name the trigger: %v", err)
	}
	if v, err := db.Version(ctx, "audit"); err != nil || v != 4 {
		t.Errorf("version %d (%v) after the refused migration, want 4", v, err)
	}
	var n int
	if err := db.Writer().QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'trigger' AND name = 'rows_seen'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("the trigger after the refused migration: %d (%v), want 1", n, err)
	}
}

// TestPendingReferencedByViewAndTriggerMigrates (review s39): a view on
// memvault_audit_pending, or a user's trigger on memvault_audit naming
// it, made migration 05 fail — SQLite's rename of the new table checks
// every view and trigger of the schema, and these named the table the
// step had just dropped ("error in trigger ...: no such table") — so
// every Open of the trail failed. They are kept and read the new table;
// the connection's rename mode is restored.
func TestPendingReferencedByViewAndTriggerMigrates(t *testing.T) {
	ctx := context.Background()
	path, db := beforeClusteredMigration(t)
	if err := db.Write(ctx, func(tx *sql.Tx) error {
		for _, stmt := range []string{
			`CREATE TABLE chained_seen (n INTEGER)`,
			`CREATE TRIGGER chained_seen AFTER INSERT ON memvault_audit BEGIN
	INSERT INTO chained_seen SELECT count(*) FROM memvault_audit_pending;
END`,
			`CREATE VIEW pending_ids AS SELECT id FROM memvault_audit_pending`,
			`INSERT INTO memvault_audit_pending (id, at, principal, op, target, subject, key_id, mac) VALUES ('p1', 'now', 'p', 'op', 't', '', '', 'm')`,
		} {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	tb, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open of a trail whose pending table a view and a trigger name: %v", err)
	}
	defer tb.Close()
	if v, err := db.Version(ctx, "audit"); err != nil || v != len(migrations)-1 {
		t.Fatalf("version %d (%v), want %d", v, err, len(migrations)-1)
	}
	var id string
	if err := db.Writer().QueryRowContext(ctx, `SELECT id FROM pending_ids`).Scan(&id); err != nil || id != "p1" {
		t.Fatalf("the view after migration 05: %q, %v", id, err)
	}
	if err := db.Write(ctx, func(tx *sql.Tx) error { return compileWrites(ctx, tx, "memvault_audit") }); err != nil {
		t.Fatalf("the trigger on memvault_audit after migration 05: %v", err)
	}
	var legacy int
	if err := tb.db.Writer().QueryRowContext(ctx, `PRAGMA legacy_alter_table`).Scan(&legacy); err != nil || legacy != 0 {
		t.Fatalf("legacy_alter_table %d (%v) after Open, want 0", legacy, err)
	}
}
