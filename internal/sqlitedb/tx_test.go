package sqlitedb

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// TestBeginHooksAndRelease: a Begin-style write transaction runs its
// OnCommit hooks after commit only, and releases the writer semaphore on
// Rollback as on Commit, so that the next writer can begin; a read
// transaction sees the committed rows.
func TestBeginHooksAndRelease(t *testing.T) {
	ctx := context.Background()
	db, err := Open(filepath.Join(t.TempDir(), "b.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx, "t", []string{`CREATE TABLE t (x INTEGER)`}); err != nil {
		t.Fatal(err)
	}
	var calls []int
	for i := range 4 {
		tx, err := db.Begin(ctx, true)
		if err != nil {
			t.Fatalf("begin %d: %v", i, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO t VALUES (?)`, i); err != nil {
			t.Fatal(err)
		}
		tx.OnCommit(func() { calls = append(calls, i) })
		if i%2 == 1 {
			err = tx.Rollback()
		} else {
			err = tx.Commit()
		}
		if err != nil {
			t.Fatalf("end %d: %v", i, err)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatalf("a second end of %d: %v", i, err)
		}
	}
	if fmt.Sprint(calls) != "[0 2]" {
		t.Fatalf("hooks ran for %v, want [0 2]", calls)
	}
	r, err := db.Begin(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := r.QueryRowContext(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("read %d rows (%v), want 2", n, err)
	}
	if err := r.Commit(); err != nil {
		t.Fatal(err)
	}
}
