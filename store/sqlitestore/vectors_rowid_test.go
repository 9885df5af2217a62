package sqlitestore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memvault/memvault/internal/sqlitedb"
	"github.com/memvault/memvault/memvaulttest/childproc"
	"github.com/memvault/memvault/store"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// storeTables are the tables of migrations/store that hold data, copied
// by oldFormatCopy.
var storeTables = []string{"store", "store_vectors", "store_generation", "store_embedder", "store_vector_codes",
	"store_vector_log", "store_vector_quant", "store_vector_snapshot", "store_vector_fine"}

// oldFormatCopy writes to dst a database as the build before migration 9
// left it: the schema of migrations 0-8 (store_vectors WITHOUT ROWID, the
// v0 text), holding the rows of every table of src.
func oldFormatCopy(t testing.TB, src, dst string) {
	t.Helper()
	ctx := context.Background()
	raw, err := sql.Open(sqlitedb.DriverName, dst+"?_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetMaxOpenConns(1) // the ATTACH is the connection's
	h := sqlitedb.Wrap(raw)
	defer h.Close()
	if err := h.Migrate(ctx, component, migrations[:9]); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, `ATTACH DATABASE ? AS src`, src); err != nil {
		t.Fatal(err)
	}
	for _, tb := range storeTables {
		if _, err := raw.ExecContext(ctx, `INSERT OR REPLACE INTO main.`+tb+` SELECT * FROM src.`+tb); err != nil {
			t.Fatalf("%s: %v", tb, err)
		}
	}
	if _, err := raw.ExecContext(ctx, `DETACH DATABASE src`); err != nil {
		t.Fatal(err)
	}
	if wr := vectorsWithoutRowid(t, raw); !wr {
		t.Fatal("the old-format copy's store_vectors has row ids")
	}
}

// vectorsWithoutRowid reports whether store_vectors is a WITHOUT ROWID
// table, and fails if the table migration 9 copies from is still there.
func vectorsWithoutRowid(t testing.TB, db *sql.DB) bool {
	t.Helper()
	var wr, old int
	if err := db.QueryRow(`SELECT (SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = 'store_vectors'),
		(SELECT count(*) FROM sqlite_master WHERE name = ?)`, oldVectors).Scan(&wr, &old); err != nil {
		t.Fatal(err)
	}
	if old != 0 {
		t.Fatalf("%s is still in the file", oldVectors)
	}
	return wr == 1
}

// vectorRows is a digest of every row of store_vectors, in key order, and
// their count.
func vectorRows(t testing.TB, db *sql.DB) (string, int) {
	t.Helper()
	rs, err := db.Query(`SELECT prefix, key, field_name, embedding, created_at, updated_at FROM store_vectors ORDER BY prefix, key, field_name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	h, n := sha256.New(), 0
	for rs.Next() {
		var ns, key, field string
		var emb []byte
		var c, u int64
		if err := rs.Scan(&ns, &key, &field, &emb, &c, &u); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%q %q %q %x %d %d\n", ns, key, field, emb, c, u)
		n++
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil)), n
}

// TestVectorsMigrateToRowids: a file of the build before migration 9,
// whose store_vectors is a WITHOUT ROWID table (a lookup by key read every
// 6 KiB row it compared on the way down, overflow pages included: ~37
// pages per vector at 1 536 dimensions), is migrated at Open to a table
// with row ids and a unique key index: every row kept as it was, the old
// table gone, searches equal to the exact scan, and the upsert on the key
// and the cascade from store still work.
func TestVectorsMigrateToRowids(t *testing.T) {
	const items, dims = 300, 1536
	s, _, g, path := denseStore(t, items, dims)
	if wr := vectorsWithoutRowid(t, s.db.Reader()); wr {
		t.Fatal("a new store's store_vectors is a WITHOUT ROWID table")
	}
	s.Close()
	old := filepath.Join(t.TempDir(), "v8.db")
	oldFormatCopy(t, path, old)
	rawOld, err := sql.Open(sqlitedb.DriverName, old)
	if err != nil {
		t.Fatal(err)
	}
	want, n := vectorRows(t, rawOld)
	rawOld.Close()
	if n != items {
		t.Fatalf("%d vectors in the old-format copy, want %d", n, items)
	}

	m := openStore(t, old, Options{Index: g.index()})
	defer m.Close()
	if v, err := m.db.Version(context.Background(), component); err != nil || v != len(migrations)-1 {
		t.Fatalf("version %d after Open (%v), want %d", v, err, len(migrations)-1)
	}
	if vectorsWithoutRowid(t, m.db.Reader()) {
		t.Fatal("store_vectors is still a WITHOUT ROWID table after Open")
	}
	if got, n := vectorRows(t, m.db.Reader()); got != want || n != items {
		t.Fatalf("the migration changed the vectors: %d rows, digest %s, want %d, %s", n, got, items, want)
	}
	exact := openStore(t, old, Options{Index: g.index(), VectorCacheBytes: -1})
	defer exact.Close()
	searchDense(t, m, exact, 6, 10)

	// The upsert names the key's columns (ON CONFLICT), which the unique
	// index serves; a delete of the item cascades to its vector.
	ctx := context.Background()
	ns := store.Namespace{"u", "1"}
	if err := m.Put(ctx, ns, "1", map[string]any{"text": "v7"}); err != nil {
		t.Fatal(err)
	}
	if err := m.Delete(ctx, ns, "3"); err != nil {
		t.Fatal(err)
	}
	var cnt, one int
	if err := m.db.Reader().QueryRow(`SELECT count(*), sum(prefix = 'u.1' AND key = '1') FROM store_vectors`).Scan(&cnt, &one); err != nil {
		t.Fatal(err)
	}
	if cnt != items-1 || one != 1 {
		t.Fatalf("after a put and a delete: %d vectors (want %d), %d of the put item (want 1)", cnt, items-1, one)
	}
	searchDense(t, m, exact, 6, 10)
}

// migrateKillArg is TestMigrateKillChild's argument.
type migrateKillArg struct {
	Path string // the old-format file the child opens
	// PauseAt is where the child pauses (says pausedLine, then waits for
	// the parent to kill it); "" is nowhere (it finishes).
	PauseAt string
	// PauseAtLog, for pauseCopy, is a size of the write-ahead log: the
	// child pauses before the first insert of the copy of migration 9
	// that finds the log grown to it.
	PauseAtLog int64
}

// The points TestMigrateKillChild pauses at (migrateKillArg.PauseAt).
const (
	// pauseCopy: inside migration 9's transaction, before an insert of
	// the copy (a pre-update hook).
	pauseCopy = "copy"
	// pauseBeforeDrop: migration 9 committed, the drop of the old table
	// not begun (an authorizer, as the DROP TABLE is compiled).
	pauseBeforeDrop = "before the drop"
	// pauseDropCommit: the drop of the old table done but not committed
	// (the commit hook of its transaction: its pages zeroed, none of them
	// committed to the log).
	pauseDropCommit = "at the drop's commit"
)

// pausedLine starts what TestMigrateKillChild says once it waits at its
// point, followed by the point and, for pauseCopy, the row of the copy it
// waits before.
const pausedLine = "paused: "

// TestMigrateKillChild is the process TestMigrateKill kills: it opens the
// store on the file it is given (which runs migration 9, then drops the
// old table), then exits. Asked to pause, it stops at the point it is
// given and waits there until the parent kills it: hooks of SQLite,
// registered on this test process's connections only (production code
// has none), block the connection that reaches the point — a pre-update
// hook the first insert into store_vectors that finds the log grown to
// PauseAtLog; an authorizer the compilation of the DROP TABLE of the old
// table; a commit hook the commit that follows that compilation.
func TestMigrateKillChild(t *testing.T) {
	var arg migrateKillArg
	if !childproc.Arg(t, &arg) {
		t.Skip("child process of TestMigrateKill")
	}
	if arg.PauseAt != "" {
		// Ends when the parent has gone without killing this process.
		parentGone := childproc.StdinClosed()
		pause := func(format string, args ...any) {
			childproc.Say(pausedLine+arg.PauseAt+format, args...)
			<-parentGone
			fmt.Fprintln(os.Stderr, "migrate: the parent went away without killing the paused child")
			os.Exit(3)
		}
		var inserted atomic.Int64
		sqlite.RegisterConnectionHook(func(c sqlite.ExecQuerierContext, _ string) error {
			h, ok := c.(sqlite.HookRegisterer)
			a, ok2 := c.(sqlite.AuthorizerRegisterer)
			if !ok || !ok2 {
				return fmt.Errorf("the connection %T registers no hooks", c)
			}
			switch arg.PauseAt {
			case pauseCopy:
				h.RegisterPreUpdateHook(func(d sqlite.SQLitePreUpdateData) {
					if d.Op != sqlite3.SQLITE_INSERT || d.DatabaseName != "main" || d.TableName != "store_vectors" {
						return
					}
					row := inserted.Add(1)
					if fi, err := os.Stat(arg.Path + "-wal"); err == nil && fi.Size() >= arg.PauseAtLog {
						pause(" before row %d", row)
					}
				})
			case pauseBeforeDrop, pauseDropCommit:
				var dropping atomic.Bool // this connection compiled the drop
				if err := a.RegisterAuthorizer(func(action sqlite.AuthorizerActionCode, arg1, _, db, _ string) sqlite.AuthorizerReturnCode {
					if action == sqlite.AuthDropTable && arg1 == oldVectors && db == "main" {
						if arg.PauseAt == pauseBeforeDrop {
							pause("")
						}
						dropping.Store(true)
					}
					return sqlite.AuthorizerOK
				}); err != nil {
					return err
				}
				h.RegisterCommitHook(func() int32 {
					if dropping.Load() && arg.PauseAt == pauseDropCommit {
						pause("")
					}
					return 0
				})
			default:
				return fmt.Errorf("no pause point %q", arg.PauseAt)
			}
			return nil
		})
	}
	s, err := Open(context.Background(), arg.Path, Options{})
	if err == nil {
		err = s.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "migrate:", err)
		os.Exit(2)
	}
	os.Exit(0)
}

// TestMigrateKill kills (SIGKILL) a process while it runs migration 9 on
// an old-format file, at several points (inside the copy's transaction,
// at three depths of the copy; once the migration committed, before the
// drop of the old table; in the drop, before its commit; after): the
// file is intact, either unchanged (version 8, the old table) or
// migrated, and the next Open migrates it with every vector as it was
// (and, after a kill before the drop, searches equal to the exact scan).
//
// No kill races the child: the child pauses at its round's point and
// says so (see TestMigrateKillChild), the parent checks the file's state
// there and kills it then, and a round whose child ended without
// reaching its point fails. (Watching the log's size, then the version,
// a parent starved on a loaded machine killed no round inside the
// transaction, then no round before the drop.)
func TestMigrateKill(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	const items, dims = 3000, 1536
	s, _, g, path := denseStore(t, items, dims)
	s.Close()
	seed := filepath.Join(t.TempDir(), "v8.db")
	oldFormatCopy(t, path, seed)
	rawSeed, err := sql.Open(sqlitedb.DriverName, seed)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := vectorRows(t, rawSeed)
	if _, err := rawSeed.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	rawSeed.Close()
	data, err := os.ReadFile(seed)
	if err != nil {
		t.Fatal(err)
	}
	vectorBytes := int64(items * dims * 4)
	// share, for pauseCopy, is the log's size at the pause, as a share of
	// the vectors' bytes (the copy writes about 1.4×, the drop about as
	// much again). version and old are the file's state at the point
	// (the state the kill leaves): the version of the store's schema
	// recorded, and whether the old table is in the file.
	for round, r := range []struct {
		pause   string
		share   float64
		version int
		old     bool
	}{
		{pauseCopy, 0.05, 8, false},
		{pauseCopy, 0.4, 8, false},
		{pauseCopy, 0.9, 8, false},
		{pauseBeforeDrop, 0, 9, true},
		{pauseDropCommit, 0, 9, true},
		{"", 0, 9, false}, // not killed: the child finishes
	} {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "m.db")
			if err := os.WriteFile(p, data, 0o600); err != nil {
				t.Fatal(err)
			}
			arg := migrateKillArg{Path: p, PauseAt: r.pause, PauseAtLog: int64(r.share * float64(vectorBytes))}
			child := childproc.Start(t, "TestMigrateKillChild", arg)
			raw, err := sql.Open(sqlitedb.DriverName, p+"?_pragma=busy_timeout(5000)")
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			state := func() (v int, old bool) {
				t.Helper()
				var n int
				if err := raw.QueryRow(`SELECT (SELECT max(v) FROM memvault_migrations WHERE component = 'store'),
					(SELECT count(*) FROM sqlite_master WHERE name = ?)`, oldVectors).Scan(&v, &n); err != nil {
					t.Fatal(err)
				}
				return v, n == 1
			}
			if r.pause != "" {
				var other []string
				at := ""
				for l := range child.Lines {
					if rest, ok := strings.CutPrefix(l, pausedLine); ok {
						at = rest
						break
					}
					other = append(other, l)
				}
				if !strings.HasPrefix(at, r.pause) {
					t.Fatalf("the child ended without pausing %s (%v): %s", r.pause, child.Wait(), strings.Join(other, "\n"))
				}
				if v, old := state(); v != r.version || old != r.old {
					t.Fatalf("the child paused %s; the file has version %d, the old table: %v; want %d, %v", at, v, old, r.version, r.old)
				}
				fi, err := os.Stat(p + "-wal")
				if err != nil {
					t.Fatal(err)
				}
				child.Kill()
				t.Logf("killed %s (%d rows), with a %d-byte log (%.2f× the vectors' bytes)",
					at, items, fi.Size(), float64(fi.Size())/float64(vectorBytes))
			} else if err := child.Wait(); err != nil {
				t.Fatalf("the child's migration: %v", err)
			}
			var ok string
			if err := raw.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
				t.Fatalf("integrity_check after the kill: %q %v", ok, err)
			}
			if v, old := state(); v != r.version || old != r.old {
				t.Fatalf("after the kill: version %d, the old table: %v; want %d, %v", v, old, r.version, r.old)
			}
			if r.version == 8 {
				if got, _ := vectorRows(t, raw); got != want {
					t.Fatal("the file is at version 8 but its vectors changed")
				}
			}
			m := openStore(t, p, Options{Index: g.index()})
			defer m.Close()
			if vectorsWithoutRowid(t, m.db.Reader()) {
				t.Fatal("store_vectors is still a WITHOUT ROWID table after Open")
			}
			if got, n := vectorRows(t, m.db.Reader()); got != want || n != items {
				t.Fatalf("after the kill and Open: %d vectors, digest %s, want %d, %s", n, got, items, want)
			}
			if r.pause == pauseBeforeDrop {
				// Searches after a migration finished by the next Open
				// (the digest above holds every round's vectors; the
				// searches cost most of a round under -race).
				exact := openStore(t, p, Options{Index: g.index(), VectorCacheBytes: -1})
				defer exact.Close()
				searchDense(t, m, exact, 3, 10)
			}
		})
	}
}

// TestOpenMapsNothing: a store's Open reads the file without SQLite's
// memory map, on the writer and the readers (from a cold page cache a
// fault in the map read megabytes ahead of a search's scattered pages).
func TestOpenMapsNothing(t *testing.T) {
	s := openStore(t, filepath.Join(t.TempDir(), "s.db"), Options{})
	defer s.Close()
	for _, p := range []*sql.DB{s.db.Writer(), s.db.Reader()} {
		var n int64
		if err := p.QueryRow(`PRAGMA mmap_size`).Scan(&n); err != nil || n != 0 {
			t.Fatalf("mmap_size %d (%v), want 0", n, err)
		}
	}
}
