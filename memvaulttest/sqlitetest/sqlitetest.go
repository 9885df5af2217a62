package sqlitetest

import (
	"bufio"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	_ "modernc.org/sqlite" // the reader process's driver
)

// readerEnv names the database file a test binary re-executed by
// StartReader holds a read transaction on.
const readerEnv = "MEMVAULT_SQLITETEST_READER"

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
	path := os.Getenv(readerEnv)
	if path == "" {
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
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// StartReader starts another process — this test binary, running the
// package's TestReaderProcess — that holds a read transaction on the
// SQLite database at path, and returns when it holds it. stop ends it (and
// the test's cleanup does, if not called).
func StartReader(t *testing.T, path string) (stop func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestReaderProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), readerEnv+"="+path)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := false
	stop = func() {
		if done {
			return
		}
		done = true
		in.Close()
		_ = cmd.Wait()
	}
	t.Cleanup(stop)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		stop()
		t.Fatalf("reader process: %q %v", line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return stop
}
