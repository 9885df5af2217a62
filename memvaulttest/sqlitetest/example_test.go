package sqlitetest_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/memvaulttest/sqlitetest"
	_ "modernc.org/sqlite"
)

// A test package declares the reader process once, then a test starts it
// on a database file, does what must cope with a pinned read snapshot
// (a checkpoint of the write-ahead log cannot pass it), and stops it. The
// example is compiled, not run: the reader is this test binary run again
// with -test.run=TestReaderProcess, which only a test package declaring
// that test has, and both helpers need the *testing.T of a test. vault's
// TestReencryptReportsPendingCompaction runs it.
func Example() {
	// In the package's tests:
	//
	//	func TestReaderProcess(t *testing.T) { sqlitetest.ReaderProcess(t) }
	_ = func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "data.db")
		db, err := sql.Open("sqlite", path+"?_pragma=journal_mode(WAL)")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.ExecContext(context.Background(), `CREATE TABLE t (v TEXT)`); err != nil {
			t.Fatal(err)
		}
		stop := sqlitetest.StartReader(t, path) // returns once the reader holds its snapshot
		// ... write, checkpoint or compact here: the reader's snapshot pins
		// the log's frames ...
		stop()
	}
}
