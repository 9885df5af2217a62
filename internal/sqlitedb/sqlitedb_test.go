package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

func pragma(t *testing.T, db *sql.DB, name string) string {
	t.Helper()
	var v string
	if err := db.QueryRow("PRAGMA " + name).Scan(&v); err != nil {
		t.Fatalf("PRAGMA %s: %v", name, err)
	}
	return v
}

func TestOpenPragmas(t *testing.T) {
	for _, tc := range []struct {
		sync Synchronous
		want string
	}{{SyncNormal, "1"}, {SyncFull, "2"}} {
		path := filepath.Join(t.TempDir(), "db.sqlite")
		db, err := Open(path, Options{Synchronous: tc.sync})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []*sql.DB{db.Writer(), db.Reader()} {
			if got := pragma(t, p, "journal_mode"); got != "wal" {
				t.Errorf("journal_mode = %q, want wal", got)
			}
			if got := pragma(t, p, "foreign_keys"); got != "1" {
				t.Errorf("foreign_keys = %q, want 1", got)
			}
			if got := pragma(t, p, "busy_timeout"); got != "5000" {
				t.Errorf("busy_timeout = %q, want 5000", got)
			}
			if got := pragma(t, p, "synchronous"); got != tc.want {
				t.Errorf("synchronous = %q, want %q", got, tc.want)
			}
		}
		if got := pragma(t, db.Reader(), "query_only"); got != "1" {
			t.Errorf("reader query_only = %q, want 1", got)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOpenNoMmap: a file opened with NoMmap is read without SQLite's
// memory map on every connection, writer and readers; by default the map
// is 64 MiB.
func TestOpenNoMmap(t *testing.T) {
	for _, tc := range []struct {
		noMmap bool
		want   string
	}{{false, "67108864"}, {true, "0"}} {
		db, err := Open(filepath.Join(t.TempDir(), "db.sqlite"), Options{NoMmap: tc.noMmap})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []*sql.DB{db.Writer(), db.Reader()} {
			if got := pragma(t, p, "mmap_size"); got != tc.want {
				t.Errorf("NoMmap %v: mmap_size = %s, want %s", tc.noMmap, got, tc.want)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCreatedFilesPrivate: a database file Open creates, and the -wal and
// -shm files SQLite creates beside it, are readable by their owner only
// (they were 0644 under umask 022 before); a file that exists keeps the
// mode its owner chose.
func TestCreatedFilesPrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Write(context.Background(), func(tx *sql.Tx) error {
		_, err := tx.Exec("CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('x')")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"agent.db", "agent.db-wal", "agent.db-shm"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if m := fi.Mode().Perm(); m != 0o600 {
			t.Errorf("%s: mode %v, want -rw-------", name, m)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	shared := filepath.Join(dir, "shared.db")
	if err := os.WriteFile(shared, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	db, err = Open(shared, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if fi, err := os.Stat(shared); err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("existing file: %v, %v; want its mode -rw-r----- kept", fi.Mode().Perm(), err)
	}
}

func TestOpenSharesHandlePerFile(t *testing.T) {
	dir := t.TempDir()
	a, err := Open(filepath.Join(dir, "x.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A different spelling of the same path.
	b, err := Open(filepath.Join(dir, ".", "x.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Writer() != b.Writer() || a.Reader() != b.Reader() {
		t.Fatal("handles on one file do not share pools")
	}
	c, err := Open(filepath.Join(dir, "y.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Writer() == a.Writer() {
		t.Fatal("handles on different files share pools")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil { // idempotent, does not release b
		t.Fatal(err)
	}
	if err := b.Writer().Ping(); err != nil {
		t.Fatalf("pools closed while a handle remains: %v", err)
	}
	if err := a.Write(context.Background(), func(*sql.Tx) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Fatalf("Write on closed handle: %v, want ErrClosed", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Writer().Ping(); err == nil {
		t.Fatal("pools still open after the last Close")
	}
	// Reopening after the last close gives fresh pools on the same data.
	d, err := Open(filepath.Join(dir, "x.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Writer().Ping(); err != nil {
		t.Fatal(err)
	}
}

func TestOpenInvalidPath(t *testing.T) {
	for _, p := range []string{"", "a?b", "a#b"} {
		if _, err := Open(p, Options{}); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("Open(%q) = %v, want ErrInvalidPath", p, err)
		}
	}
}

// TestOpenSaysWhyNot: SQLite reports a directory, or a file in a missing
// directory, as "unable to open database file" alone; the error now says
// which (before: "sqlitedb: open /tmp/x: unable to open database file
// (14)" for both).
func TestOpenSaysWhyNot(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ path, want string }{
		{dir, "it is a directory"},
		{filepath.Join(dir, "missing", "x.db"), "the directory " + filepath.Join(dir, "missing") + " does not exist"},
	} {
		d, err := Open(tc.path, Options{})
		if err == nil {
			d.Close()
			t.Fatalf("Open(%q) = nil error", tc.path)
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%q) = %v, want it to say %q", tc.path, err, tc.want)
		}
	}
}

func TestMemoryIsPrivate(t *testing.T) {
	ctx := context.Background()
	a, err := Open(Memory, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(Memory, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := a.Migrate(ctx, "t", []string{`CREATE TABLE t (x INTEGER)`}); err != nil {
		t.Fatal(err)
	}
	if v, err := b.Version(ctx, "t"); err == nil && v != -1 {
		t.Fatalf("second memory database sees the first: version %d", v)
	}
}

func TestMigrate(t *testing.T) {
	ctx := context.Background()
	db, err := Open(filepath.Join(t.TempDir(), "m.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	steps := []string{
		`CREATE TABLE a (x INTEGER)`,
		`CREATE TABLE b (y INTEGER); CREATE INDEX b_y ON b (y)`,
	}
	// Concurrent setups apply every step once.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() { errs <- db.Migrate(ctx, "c", steps) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if v, err := db.Version(ctx, "c"); err != nil || v != 1 {
		t.Fatalf("Version = %d, %v; want 1", v, err)
	}
	var n int
	if err := db.Reader().QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'b_y'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("index from a multi-statement step: %d, %v", n, err)
	}
	// A later build adds a step; an older one ignores steps it does not know.
	if err := db.Migrate(ctx, "c", append(steps, `CREATE TABLE c (z INTEGER)`)); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, "c", steps); err != nil {
		t.Fatalf("older build on a newer schema: %v", err)
	}
	// A failing step is rolled back with its record.
	if err := db.Migrate(ctx, "d", []string{`CREATE TABLE d (x)`, `NOT SQL`}); err == nil {
		t.Fatal("bad step applied")
	}
	if v, _ := db.Version(ctx, "d"); v != -1 {
		t.Fatalf("failed migration recorded version %d", v)
	}
}

func TestWriteRollsBackOnError(t *testing.T) {
	ctx := context.Background()
	db, err := Open(filepath.Join(t.TempDir(), "w.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx, "t", []string{`CREATE TABLE t (x INTEGER)`}); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err = db.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.Exec(`INSERT INTO t VALUES (1)`); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Write = %v, want boom", err)
	}
	var n int
	if err := db.Reader().QueryRow(`SELECT count(*) FROM t`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("rows after rollback: %d, %v", n, err)
	}
	if _, err := db.Reader().Exec(`INSERT INTO t VALUES (2)`); err == nil {
		t.Fatal("reader pool accepted a write")
	}
}

// TestConcurrentWriters runs many writers through two handles on one file
// and a wrapped *sql.DB on another, with readers alongside, under -race.
func TestConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a, err := Open(filepath.Join(dir, "c.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(filepath.Join(dir, "c.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	raw, err := sql.Open(DriverName, filepath.Join(dir, "wrapped.db")+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	w1, w2 := Wrap(raw), Wrap(raw)
	defer w1.Close()
	defer w2.Close()

	for _, pair := range [][2]*DB{{a, b}, {w1, w2}} {
		if err := pair[0].Migrate(ctx, "t", []string{`CREATE TABLE t (n INTEGER NOT NULL)`}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		const writers, each = 6, 25
		errs := make(chan error, writers*2)
		for i := range writers {
			h := pair[i%2]
			wg.Go(func() {
				for range each {
					// Read-then-write: would hit SQLITE_BUSY upgrades
					// without BEGIN IMMEDIATE semantics.
					err := h.Write(ctx, func(tx *sql.Tx) error {
						var n int
						if err := tx.QueryRow(`SELECT count(*) FROM t`).Scan(&n); err != nil {
							return err
						}
						_, err := tx.Exec(`INSERT INTO t VALUES (?)`, n)
						return err
					})
					if err != nil {
						errs <- err
						return
					}
				}
			})
			wg.Go(func() {
				for range each {
					err := h.Read(ctx, func(tx *sql.Tx) error {
						var n int
						return tx.QueryRow(`SELECT count(*) FROM t`).Scan(&n)
					})
					if err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		var n, distinct int
		if err := pair[0].Reader().QueryRow(`SELECT count(*), count(DISTINCT n) FROM t`).Scan(&n, &distinct); err != nil {
			t.Fatal(err)
		}
		if n != writers*each || distinct != n {
			t.Fatalf("rows %d distinct %d, want %d serialized writes", n, distinct, writers*each)
		}
	}
}

func TestWriteCommitted(t *testing.T) {
	ctx := context.Background()
	db, err := Open(Memory, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx, "t", []string{`CREATE TABLE t (x INTEGER)`}); err != nil {
		t.Fatal(err)
	}
	var calls []int
	for i := range 3 {
		fail := i == 1
		err := db.WriteCommitted(ctx, func(tx *sql.Tx) error {
			if fail {
				return errors.New("no")
			}
			_, err := tx.Exec(`INSERT INTO t VALUES (?)`, i)
			return err
		}, func() { calls = append(calls, i) })
		if (err != nil) != fail {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if fmt.Sprint(calls) != "[0 2]" {
		t.Fatalf("committed callbacks %v, want [0 2] (none after a rollback)", calls)
	}
}

func TestWriteHonoursContext(t *testing.T) {
	db, err := Open(Memory, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := db.Write(ctx, func(*sql.Tx) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("Write with cancelled context = %v", err)
	}
}

func ExampleOpen() {
	ctx := context.Background()
	db, err := Open(Memory, Options{})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	err = db.Migrate(ctx, "notes", []string{`CREATE TABLE notes (body TEXT NOT NULL)`})
	if err != nil {
		panic(err)
	}
	err = db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO notes VALUES ('hello')`)
		return err
	})
	if err != nil {
		panic(err)
	}
	var body string
	err = db.Read(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT body FROM notes`).Scan(&body)
	})
	if err != nil {
		panic(err)
	}
	v, _ := db.Version(ctx, "notes")
	fmt.Println(body, v)
	// Output: hello 0
}
