package sqliteaudit

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/memvault/memvault/audit"
)

// TestAppendPendingOldestFirst: a chaining run is given the oldest
// pending rows, by time then id, whatever their keys' order — read whole
// and sorted in Go when the table holds at most limit rows, sorted by
// SQLite when it holds more — and deletes exactly the rows it was given.
// The rows' keys here run against their times (ids of builds before
// time-ordered ids were random), and two share a time. (SQLite orders
// by julianday, which ties times less than ~40 µs apart: these are not.)
func TestAppendPendingOldestFirst(t *testing.T) {
	ctx := context.Background()
	tb, err := Open(ctx, filepath.Join(t.TempDir(), "trail.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	base := time.Date(2026, 12, 2, 18, 0, 0, 0, time.UTC)
	rows := []struct {
		id string
		at time.Time
	}{
		{"e", base},
		{"d", base.Add(time.Millisecond)},
		{"c", base.Add(2 * time.Second)},
		{"b", base.Add(time.Hour)},
		{"a", base.Add(time.Hour)},
	}
	if err := tb.db.Write(ctx, func(tx *sql.Tx) error {
		for _, r := range rows {
			if _, err := tx.ExecContext(ctx, `INSERT INTO memvault_audit_pending (id, at, principal, op, target, subject, key_id, mac) VALUES (?, ?, 'p', 'checkpoint.write', 't', '', '', 'x')`,
				r.id, r.at.Format(time.RFC3339Nano)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	run := func(limit int) string {
		t.Helper()
		var got string
		if err := tb.AppendPending(ctx, limit, func(_ *audit.Record, ps []audit.Pending) ([]audit.Record, error) {
			got = ""
			for _, p := range ps {
				got += p.ID
			}
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	left := func() (n int) {
		t.Helper()
		if err := tb.db.Writer().QueryRowContext(ctx, `SELECT count(*) FROM memvault_audit_pending`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if got := run(2); got != "ed" { // more rows than limit: SQLite sorts
		t.Errorf("limit 2 of 5: got %q, want \"ed\"", got)
	}
	if n := left(); n != 3 {
		t.Errorf("%d rows left after chaining 2 of 5, want 3", n)
	}
	if got := run(3); got != "cab" { // all of them: sorted here
		t.Errorf("limit 3 of 3: got %q, want \"cab\"", got)
	}
	if n := left(); n != 0 {
		t.Errorf("%d rows left after chaining all, want 0", n)
	}
}
