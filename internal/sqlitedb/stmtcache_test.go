package sqlitedb

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

// TestStmtCache: a statement prepared before the write transaction runs in
// it (the one writer connection is not asked for twice: preparing inside
// the transaction waited for it forever), one not prepared runs
// unprepared, a bad one reports its error at Exec, and Close empties the
// cache.
func TestStmtCache(t *testing.T) {
	ctx := context.Background()
	d, err := Open(filepath.Join(t.TempDir(), "c.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.Writer().ExecContext(ctx, `CREATE TABLE t (v INTEGER)`); err != nil {
		t.Fatal(err)
	}
	var c StmtCache
	const ins = `INSERT INTO t (v) VALUES (?)`
	c.Prepare(ctx, d.Writer(), ins)
	c.Prepare(ctx, d.Writer(), ins) // twice: one statement
	c.Prepare(ctx, d.Writer(), `INSERT INTO nope VALUES (?)`)
	n := 0
	c.m.Range(func(any, any) bool { n++; return true })
	if n != 1 {
		t.Fatalf("%d statements cached, want 1 (the bad one is not)", n)
	}
	err = d.Write(ctx, func(tx *sql.Tx) error {
		for i := range 3 {
			if _, err := c.Exec(ctx, tx, ins, i); err != nil {
				return err
			}
		}
		if _, err := c.Exec(ctx, tx, `INSERT INTO t (v) VALUES (?), (?)`, 10, 11); err != nil { // unprepared
			return err
		}
		if _, err := c.Exec(ctx, tx, `INSERT INTO nope VALUES (?)`, 1); err == nil {
			t.Error("Exec of a statement on a missing table: nil error")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var rows int
	if err := d.Reader().QueryRowContext(ctx, `SELECT count(*) FROM t`).Scan(&rows); err != nil || rows != 5 {
		t.Fatalf("%d rows (%v), want 5", rows, err)
	}
	c.Close()
	n = 0
	c.m.Range(func(any, any) bool { n++; return true })
	if n != 0 {
		t.Fatalf("%d statements after Close", n)
	}
}
