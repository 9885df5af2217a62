package sqliteaudit_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/audittest"
	"github.com/memvault/memvault/audit/sqliteaudit"
)

// killEnv names the trail file the re-executed test binary writes to in
// TestKillWriterChild.
const killEnv = "MEMVAULT_SQLITEAUDIT_KILL_DB"

// TestKillWriterChild is the process TestKillWriter kills: it appends to
// the trail from many goroutines (group commits) until it is killed.
func TestKillWriterChild(t *testing.T) {
	path := os.Getenv(killEnv)
	if path == "" {
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
			cmd := exec.Command(os.Args[0], "-test.run=^TestKillWriterChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), killEnv+"="+path)
			audittest.KillWriter(t, cmd, 300+round*250, func(t *testing.T) audit.Table {
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
