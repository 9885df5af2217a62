package sqlitetest_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/memvault/memvault/internal/sqlitedb"
	"github.com/memvault/memvault/memvaulttest/sqlitetest"
)

// busyTimeout returns the busy_timeout, in milliseconds, of a connection
// of db.
func busyTimeout(t *testing.T, db *sql.DB) int64 {
	t.Helper()
	var ms int64
	if err := db.QueryRow(`PRAGMA busy_timeout`).Scan(&ms); err != nil {
		t.Fatal(err)
	}
	return ms
}

// TestBusyTimeout: while BusyTimeout is in force, a new connection has its
// busy_timeout, whatever its DSN said, memvault's own pools (sqlitedb)
// included; once the test that set it ends, new connections have their
// DSN's again.
func TestBusyTimeout(t *testing.T) {
	dir := t.TempDir()
	dsn := filepath.Join(dir, "raw.db") + "?_pragma=busy_timeout(5000)"
	t.Run("set", func(t *testing.T) {
		sqlitetest.BusyTimeout(t, 90*time.Second)
		raw, err := sql.Open("sqlite", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		if ms := busyTimeout(t, raw); ms != 90000 {
			t.Errorf("busy_timeout %d ms with the DSN's 5000, want 90000", ms)
		}
		db, err := sqlitedb.Open(filepath.Join(dir, "pools.db"), sqlitedb.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for name, p := range map[string]*sql.DB{"writer": db.Writer(), "reader": db.Reader()} {
			if ms := busyTimeout(t, p); ms != 90000 {
				t.Errorf("sqlitedb's %s: busy_timeout %d ms, want 90000", name, ms)
			}
		}
		if err := db.Write(context.Background(), func(tx *sql.Tx) error {
			_, err := tx.Exec(`CREATE TABLE t (v INTEGER)`)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	})
	raw, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if ms := busyTimeout(t, raw); ms != 5000 {
		t.Errorf("after the test that set it: busy_timeout %d ms, want the DSN's 5000", ms)
	}
}
