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
	"time"

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
	// PauseAtLog, when > 0, is a size of the write-ahead log: before the
	// first insert of the copy of migration 9 that finds the log grown to
	// it, the child says pausedLine and waits, inside the migration's
	// transaction, for the parent to kill it.
	PauseAtLog int64
}

// pausedLine starts what TestMigrateKillChild says once it waits inside
// the migration's transaction, followed by the row of the copy it waits
// before.
const pausedLine = "paused inside the copy before row "

// TestMigrateKillChild is the process TestMigrateKill kills: it opens the
// store on the file it is given (which runs migration 9), then exits.
// Asked to pause, it stops in the middle of the copy, still inside the
// migration's transaction: a pre-update hook of SQLite, registered on this
// test process's connections only (production code has no hook), blocks
// the first insert into store_vectors that finds the log grown to
// PauseAtLog until the parent kills it.
func TestMigrateKillChild(t *testing.T) {
	var arg migrateKillArg
	if !childproc.Arg(t, &arg) {
		t.Skip("child process of TestMigrateKill")
	}
	if arg.PauseAtLog > 0 {
		// Ends when the parent has gone without killing this process.
		parentGone := childproc.StdinClosed()
		var inserted atomic.Int64
		sqlite.RegisterConnectionHook(func(c sqlite.ExecQuerierContext, _ string) error {
			h, ok := c.(sqlite.HookRegisterer)
			if !ok {
				return fmt.Errorf("the connection %T registers no hooks", c)
			}
			h.RegisterPreUpdateHook(func(d sqlite.SQLitePreUpdateData) {
				if d.Op != sqlite3.SQLITE_INSERT || d.DatabaseName != "main" || d.TableName != "store_vectors" {
					return
				}
				row := inserted.Add(1)
				if fi, err := os.Stat(arg.Path + "-wal"); err == nil && fi.Size() >= arg.PauseAtLog {
					childproc.Say("%s%d", pausedLine, row)
					<-parentGone
					fmt.Fprintln(os.Stderr, "migrate: the parent went away without killing the paused child")
					os.Exit(3)
				}
			})
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
// at three depths of the copy; in the drop of the old table; after): the
// file is intact, either unchanged (version 8, the old table) or
// migrated, and the next Open migrates it with every vector as it was
// (and, after a kill before the drop, searches equal to the exact scan).
//
// The kills inside the transaction do not race the copy: the child
// pauses before the insert of a given row of the copy and says so (see
// TestMigrateKillChild), and the parent kills it then. Watching the
// log's size instead, a parent starved for the whole copy on a loaded
// machine killed no round inside the transaction.
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
	unchanged := 0
	vectorBytes := int64(items * dims * 4)
	// Kill points: share > 0: the child pauses inside the copy's
	// transaction once the log has grown to share × the vectors' bytes
	// (the copy writes about 1.4×, the drop about as much again); 0: as
	// soon as another connection sees migration 9 recorded (the drop of
	// the old table then runs); -1: never (the child finishes).
	const inside = 3
	dropping := 0
	for round, share := range []float64{0.05, 0.4, 0.9, 0, 0, -1} {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "m.db")
			if err := os.WriteFile(p, data, 0o600); err != nil {
				t.Fatal(err)
			}
			arg := migrateKillArg{Path: p}
			if share > 0 {
				arg.PauseAtLog = int64(share * float64(vectorBytes))
			}
			child := childproc.Start(t, "TestMigrateKillChild", arg)
			raw, err := sql.Open(sqlitedb.DriverName, p+"?_pragma=busy_timeout(5000)")
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			if share > 0 {
				var other []string
				row := ""
				for l := range child.Lines {
					if r, ok := strings.CutPrefix(l, pausedLine); ok {
						row = r
						break
					}
					other = append(other, l)
				}
				if row == "" {
					t.Fatalf("the child ended without pausing inside the copy (%v): %s", child.Wait(), strings.Join(other, "\n"))
				}
				// The paused transaction has committed nothing.
				var v int
				if err := raw.QueryRow(`SELECT max(v) FROM memvault_migrations WHERE component = 'store'`).Scan(&v); err != nil || v != 8 {
					t.Fatalf("version %d (%v) while the child is paused in migration 9, want 8", v, err)
				}
				fi, err := os.Stat(p + "-wal")
				if err != nil {
					t.Fatal(err)
				}
				child.Kill()
				t.Logf("killed before the insert of row %s of %d, with a %d-byte log (%.2f× the vectors' bytes)",
					row, items, fi.Size(), float64(fi.Size())/float64(vectorBytes))
			} else {
				done := make(chan error, 1)
				go func() { done <- child.Wait() }()
			watch:
				for {
					select {
					case err := <-done:
						t.Logf("the child finished the migration (%v)", err)
						break watch
					default:
					}
					if share == 0 {
						var v int
						if err := raw.QueryRow(`SELECT coalesce(max(v), 0) FROM memvault_migrations WHERE component = 'store'`).Scan(&v); err == nil && v == 9 {
							child.Kill()
							t.Log("killed once migration 9 was recorded")
							break watch
						}
					}
					time.Sleep(100 * time.Microsecond)
				}
			}
			var ok string
			var v, old int
			if err := raw.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
				t.Fatalf("integrity_check after the kill: %q %v", ok, err)
			}
			if err := raw.QueryRow(`SELECT (SELECT max(v) FROM memvault_migrations WHERE component = 'store'),
				(SELECT count(*) FROM sqlite_master WHERE name = ?)`, oldVectors).Scan(&v, &old); err != nil {
				t.Fatal(err)
			}
			if share > 0 && (v != 8 || old != 0) {
				t.Fatalf("killed inside the copy's transaction, the file has version %d and %d old tables, want 8 and 0", v, old)
			}
			switch {
			case v == 8 && old == 0:
				unchanged++
				if got, _ := vectorRows(t, raw); got != want {
					t.Fatal("the file is at version 8 but its vectors changed")
				}
				t.Log("unchanged")
			case v == 9:
				if old == 1 {
					dropping++
				}
				t.Logf("migrated (the old table left behind: %v)", old == 1)
			default:
				t.Fatalf("after the kill: version %d, old table %d", v, old)
			}
			m := openStore(t, p, Options{Index: g.index()})
			defer m.Close()
			if vectorsWithoutRowid(t, m.db.Reader()) {
				t.Fatal("store_vectors is still a WITHOUT ROWID table after Open")
			}
			if got, n := vectorRows(t, m.db.Reader()); got != want || n != items {
				t.Fatalf("after the kill and Open: %d vectors, digest %s, want %d, %s", n, got, items, want)
			}
			if round == 3 {
				// Searches after a migration finished by the next Open
				// (the digest above holds every round's vectors; the
				// searches cost most of a round under -race).
				exact := openStore(t, p, Options{Index: g.index(), VectorCacheBytes: -1})
				defer exact.Close()
				searchDense(t, m, exact, 3, 10)
			}
		})
	}
	if unchanged != inside {
		t.Errorf("%d rounds killed the child inside the migration's transaction, want %d: the test did not test it", unchanged, inside)
	}
	t.Logf("%d rounds killed inside the copy's transaction, %d before the old table was dropped", unchanged, dropping)
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
