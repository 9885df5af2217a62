package sqliteaudit_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/audittest"
	"github.com/memvault/memvault/audit/sqliteaudit"
	"github.com/memvault/memvault/memvaulttest/childproc"
)

// TestKillWriterChild is the process TestKillWriter kills: it appends to
// the trail from many goroutines (group commits) until it is killed.
func TestKillWriterChild(t *testing.T) {
	var path string
	if !childproc.Arg(t, &path) {
		t.Skip("child process of TestKillWriter")
	}
	tb, err := sqliteaudit.Open(t.Context(), path)
	if err == nil {
		var tr *audit.Trail
		if tr, err = audittest.KillTrail(tb); err == nil {
			err = audittest.WriteUntilKilled(tr)
		}
	}
	fmt.Fprintln(os.Stderr, "writer:", err)
	os.Exit(2)
}

// TestKillWriter kills (SIGKILL) a process in the middle of group commits
// to a SQLite trail: the trail verifies and holds every record whose
// append had returned.
func TestKillWriter(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	for round := range 3 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.db")
			child := childproc.Start(t, "TestKillWriterChild", path)
			audittest.KillWriter(t, child, 300+round*250, func(t *testing.T) audit.Table {
				tb, err := sqliteaudit.Open(t.Context(), path)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { tb.Close() })
				return tb
			})
		})
	}
}
