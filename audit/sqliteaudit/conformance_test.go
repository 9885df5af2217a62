package sqliteaudit_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/audittest"
	"github.com/memvault/memvault/audit/sqliteaudit"
	"github.com/memvault/memvault/checkpointer"
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
		var pending any // NULL for none
		if r.PendingID != "" {
			pending = r.PendingID
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO memvault_audit (seq, at, principal, op, target, subject, key_id, link, mac, pending_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.Seq, r.Time.UTC().Format(time.RFC3339Nano), r.Principal, r.Op, r.Target, r.Subject, r.KeyID, r.Link, r.MAC, pending); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestPending runs the pending records' suite on a SQLite file: replayed
// and withheld pending rows, inserted and deleted through SQL on a
// connection of its own (audittest.RunPending).
func TestPending(t *testing.T) {
	audittest.RunPending(t, func(t *testing.T) audittest.PendingBackend {
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
		exec := func(t *testing.T, stmt string, args ...any) {
			t.Helper()
			if _, err := raw.ExecContext(context.Background(), stmt, args...); err != nil {
				t.Fatal(err)
			}
		}
		return audittest.PendingBackend{
			Backend: audittest.Backend{Table: tb, Put: func(t *testing.T, rs []audit.Record) { put(t, raw, rs) }},
			InsertRow: func(t *testing.T, row *checkpointer.RecordRow) {
				marks := strings.TrimSuffix(strings.Repeat("?, ", len(row.Values)), ", ")
				exec(t, `INSERT INTO `+row.Table+` (`+strings.Join(row.Columns, ", ")+`) VALUES (`+marks+`)`, row.Values...)
			},
			DeletePending: func(t *testing.T, id string) { exec(t, `DELETE FROM memvault_audit_pending WHERE id = ?`, id) },
		}
	})
}

// TestTrailBeforePendingIDs: a trail the build before pending ids left
// (../testdata/trail-before-pending-ids.json, records chained from pending
// records among them) in a SQLite file verifies, and records chained from
// pending records after it name their ids and verify.
func TestTrailBeforePendingIDs(t *testing.T) {
	b, err := os.ReadFile("../testdata/trail-before-pending-ids.json")
	if err != nil {
		t.Fatal(err)
	}
	var old []audit.Record
	if err := json.Unmarshal(b, &old); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "audit.db")
	tb, err := sqliteaudit.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	put(t, raw, old)
	tr, err := audit.NewTrail(tb, audit.Options{Key: []byte("memvault-golden-trail-key-of-32-bytes+"), DatabaseID: "golden-db", WritesInTx: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := audit.WithPrincipal(context.Background(), "s20")
	if n, err := tr.Verify(ctx); err != nil || n != 3 {
		t.Fatalf("Verify of the earlier build's trail = %d, %v; want 3, nil", n, err)
	}
	row, ok, err := tr.RecordInTx(ctx, audit.Entry{Op: audit.OpCheckpointWrite, Target: "new"})
	if err != nil || !ok {
		t.Fatalf("RecordInTx = %v, %v", ok, err)
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(row.Values)), ", ")
	if _, err := raw.Exec(`INSERT INTO `+row.Table+` (`+strings.Join(row.Columns, ", ")+`) VALUES (`+marks+`)`, row.Values...); err != nil {
		t.Fatal(err)
	}
	if err := tr.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	rep, err := tr.Check(ctx, nil)
	if err != nil || rep.Records != 4 || rep.Pending != 0 {
		t.Fatalf("Check = %+v, %v; want 4 records, none pending", rep, err)
	}
	rs, err := tb.Page(ctx, 3, 10)
	if err != nil || len(rs) != 1 || rs[0].PendingID != row.Values[0] {
		t.Fatalf("the chained record = %+v, %v; want it to name pending record %v", rs, err, row.Values[0])
	}
}
