package sqlitetest

import (
	"database/sql"
	"testing"

	"github.com/memvault/memvault/memvaulttest/childproc"
	_ "modernc.org/sqlite" // the reader process's driver
)

// ReaderProcess is the body of the test StartReader re-executes: a package
// that uses StartReader declares
//
//	func TestReaderProcess(t *testing.T) { sqlitetest.ReaderProcess(t) }
//
// Run normally, it skips. Run by StartReader, it opens the database, holds
// a read transaction on it (pinning its snapshot, as a long report or a
// backup tool reading the live file would), says "ready" and keeps it until
// its standard input closes.
func ReaderProcess(t *testing.T) {
	var path string
	if !childproc.Arg(t, &path) {
		t.Skip("run by sqlitetest.StartReader only")
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRow(`SELECT count(*) FROM sqlite_master`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	childproc.Say("ready")
	<-childproc.StdinClosed()
}

// StartReader starts another process — this test binary, running the
// package's TestReaderProcess — that holds a read transaction on the
// SQLite database at path, and returns when it holds it. stop ends it (and
// the test's cleanup does, if not called).
func StartReader(t *testing.T, path string) (stop func()) {
	t.Helper()
	reader := childproc.Start(t, "TestReaderProcess", path)
	stop = func() { _ = reader.Wait() }
	if line := <-reader.Lines; line != "ready" {
		stop()
		t.Fatalf("reader process: %q", line)
	}
	return stop
}
