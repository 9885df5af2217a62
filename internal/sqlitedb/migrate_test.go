package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"testing/fstest"
)

func TestLoad(t *testing.T) {
	fsys := fstest.MapFS{
		"m/00_tables.sql": {Data: []byte("-- why\nCREATE TABLE a (x);\nCREATE TABLE b (y);\n")},
		"m/01.sql":        {Data: []byte("\n\tALTER TABLE a ADD COLUMN z;\n\n")},
		"m/README":        {Data: []byte("ignored")},
		"gap/00.sql":      {Data: []byte("a")},
		"gap/02.sql":      {Data: []byte("b")},
		"dup/00_a.sql":    {Data: []byte("a")},
		"dup/0_b.sql":     {Data: []byte("b")},
		"name/x.sql":      {Data: []byte("a")},
		"sign/+0.sql":     {Data: []byte("a")},
		"blank/00.sql":    {Data: []byte(" \n")},
		"none/README":     {Data: []byte("")},
	}
	got, err := Load(fsys, "m")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"-- why\nCREATE TABLE a (x);\nCREATE TABLE b (y);", "ALTER TABLE a ADD COLUMN z;"}
	if !slices.Equal(got, want) {
		t.Fatalf("Load = %q, want %q", got, want)
	}
	for _, dir := range []string{"gap", "dup", "name", "sign", "blank", "none", "missing"} {
		if _, err := Load(fsys, dir); !errors.Is(err, ErrBadMigrations) {
			t.Errorf("Load(%s) = %v, want ErrBadMigrations", dir, err)
		}
	}
	func() {
		defer func() {
			if r := recover(); r == nil {
				t.Error("MustLoad of a gap did not panic")
			}
		}()
		MustLoad(fsys, "gap")
	}()
}

// TestMigrateTx: steps run in a caller's transaction commit and roll back
// with it, the records too; a transaction that commits them leaves the
// same schema Migrate makes, and later runs (either way) apply nothing.
func TestMigrateTx(t *testing.T) {
	ctx := context.Background()
	steps := []string{`CREATE TABLE a (x INTEGER)`, `CREATE TABLE b (y INTEGER); CREATE INDEX b_y ON b (y)`}
	for _, wrapped := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "tx.db")
		var db *DB
		var err error
		// inTx runs fn in a transaction of the caller's: DB.Write's, or
		// one begun on the *sql.DB the caller opened (DB.Write on a
		// wrapped database needs memvault_migrations already).
		var raw *sql.DB
		inTx := func(fn func(tx *sql.Tx) error) error {
			if raw == nil {
				return db.Write(ctx, fn)
			}
			tx, err := raw.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			if err := fn(tx); err != nil {
				_ = tx.Rollback()
				return err
			}
			return tx.Commit()
		}
		if wrapped {
			raw, err = sql.Open(DriverName, "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)")
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			db = Wrap(raw)
		} else if db, err = Open(path, Options{}); err != nil {
			t.Fatal(err)
		}
		defer db.Close()

		boom := errors.New("boom")
		err = inTx(func(tx *sql.Tx) error {
			if err := MigrateTx(ctx, tx, "c", steps); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO a VALUES (1)`); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("wrapped %v: Write = %v, want boom", wrapped, err)
		}
		var n int
		if err := db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name IN ('a', 'b', 'b_y', 'memvault_migrations')`).Scan(&n); err != nil || n != 0 {
			t.Fatalf("wrapped %v: after rollback %d objects (%v), want none", wrapped, n, err)
		}

		err = inTx(func(tx *sql.Tx) error {
			if err := MigrateTx(ctx, tx, "c", steps); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO b VALUES (2)`)
			return err
		})
		if err != nil {
			t.Fatalf("wrapped %v: %v", wrapped, err)
		}
		if v, err := db.Version(ctx, "c"); err != nil || v != 1 {
			t.Fatalf("wrapped %v: Version = %d, %v; want 1", wrapped, v, err)
		}
		if err := db.Reader().QueryRowContext(ctx, `SELECT y FROM b`).Scan(&n); err != nil || n != 2 {
			t.Fatalf("wrapped %v: row written beside the migration: %d, %v", wrapped, n, err)
		}
		// Recorded: neither runner applies a step again (CREATE TABLE
		// without IF NOT EXISTS would fail).
		if err := db.Migrate(ctx, "c", steps); err != nil {
			t.Fatalf("wrapped %v: Migrate after MigrateTx: %v", wrapped, err)
		}
		if err := inTx(func(tx *sql.Tx) error { return MigrateTx(ctx, tx, "c", steps) }); err != nil {
			t.Fatalf("wrapped %v: MigrateTx again: %v", wrapped, err)
		}
	}
}
