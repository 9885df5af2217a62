package sqlitedb

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/memvaulttest/sqlitetest"
)

func TestReaderProcess(t *testing.T) { sqlitetest.ReaderProcess(t) }

// rewriteRows is a key rotation in miniature: rows are written ("plain"),
// rewritten larger ("old-<k>|": sealed under the old key, so cells move
// and pages are rebalanced), then rewritten in the same size ("new-<k>|":
// resealed under the new key).
func rewriteRows(t *testing.T, ctx context.Context, db *DB, n int) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v TEXT NOT NULL)`)
		return err
	}))
	value := func(tag string, k, size int) string {
		return fmt.Sprintf("%s-%d|%s", tag, k, strings.Repeat("x", size))
	}
	set := func(tag string, grow int) {
		for k := range n {
			must(db.Write(ctx, func(tx *sql.Tx) error {
				_, err := tx.ExecContext(ctx, `INSERT INTO t VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v`,
					fmt.Sprint("key", k), value(tag, k, grow+(k*37)%300))
				return err
			}))
		}
	}
	set("pln", 10)
	set("old", 70)
	set("new", 70)
}

// oldImages counts the rows of rewriteRows whose old value is still in the
// files.
func oldImages(t *testing.T, n int, files ...string) int {
	t.Helper()
	var all []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	found := 0
	for k := range n {
		if bytes.Contains(all, []byte(fmt.Sprintf("old-%d|", k))) {
			found++
		}
	}
	return found
}

func walSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path + "-wal")
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestCompactLeavesNoImageOfRewrittenRows: rows rewritten in a new size
// leave images of their old values in the file although secure_delete is
// on (in the gaps of rebalanced pages, and in the log); after Compact,
// neither the file nor the log holds any, and the log is empty.
func TestCompactLeavesNoImageOfRewrittenRows(t *testing.T) {
	ctx := context.Background()
	const n = 400
	path := filepath.Join(t.TempDir(), "c.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rewriteRows(t, ctx, db, n)
	// What secure_delete alone leaves once the log is checkpointed into
	// the file: the cause Compact exists for.
	if _, err := db.Writer().ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	t.Logf("with secure_delete alone, %d of %d old values remain in the file", oldImages(t, n, path), n)

	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if got := oldImages(t, n, path, path+"-wal"); got != 0 {
		t.Fatalf("after Compact, %d old values remain in the file or its log", got)
	}
	if s := walSize(t, path); s != 0 {
		t.Fatalf("after Compact, the log holds %d bytes", s)
	}
	var rows int
	if err := db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM t WHERE v LIKE 'new-%'`).Scan(&rows); err != nil || rows != n {
		t.Fatalf("after Compact: %d rows, %v", rows, err)
	}
}

// TestCompactWithReaderInAnotherProcess: a read transaction held by
// another process keeps the log from being emptied; Compact says so
// (ErrWALBusy) instead of claiming success, and succeeds once the reader
// is gone.
func TestCompactWithReaderInAnotherProcess(t *testing.T) {
	ctx := context.Background()
	const n = 200
	path := filepath.Join(t.TempDir(), "r.db")
	db, err := Open(path, Options{BusyTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE t (k TEXT PRIMARY KEY, v TEXT NOT NULL)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	stop := sqlitetest.StartReader(t, path)
	rewriteRows(t, ctx, db, n)
	err = db.Compact(ctx)
	if !errors.Is(err, ErrWALBusy) {
		t.Fatalf("Compact beside a reader: %v, want ErrWALBusy", err)
	}
	if walSize(t, path) == 0 || oldImages(t, n, path, path+"-wal") == 0 {
		t.Fatal("the log was emptied although a reader held it")
	}
	stop()
	if err := db.Compact(ctx); err != nil {
		t.Fatalf("Compact once the reader is gone: %v", err)
	}
	if got := oldImages(t, n, path, path+"-wal"); got != 0 || walSize(t, path) != 0 {
		t.Fatalf("after Compact: %d old values, a log of %d bytes", got, walSize(t, path))
	}
}

// TestCompactMemory: an in-memory database has no file to compact.
func TestCompactMemory(t *testing.T) {
	db, err := Open(Memory, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
}
