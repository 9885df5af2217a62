package sqlitesaver_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/audittest"
	"github.com/memvault/memvault/audit/sqliteaudit"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
)

// groupedAudited is a saver with group commit on and a trail in the
// same file, the saver audited (its records inserted in the writes'
// transactions, so in the groups').
func groupedAudited(t *testing.T, path string) audittest.InTx {
	t.Helper()
	ctx := t.Context()
	inner, err := sqlitesaver.Open(ctx, path, sqlitesaver.Options{GroupCommit: 64})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inner.Close() })
	tb, err := sqliteaudit.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	tr, err := audittest.InTxTrail(tb)
	if err != nil {
		t.Fatal(err)
	}
	return audittest.InTx{Inner: inner, Saver: audit.NewSaver(inner, tr, nil), Trail: tr, Table: tb}
}

// killGroupEnv names the data file TestKillGroupCommitChild writes to.
const killGroupEnv = "MEMVAULT_SQLITESAVER_KILL_GROUP_DB"

// TestKillGroupCommitChild is the process TestKillGroupCommit kills.
func TestKillGroupCommitChild(t *testing.T) {
	path := os.Getenv(killGroupEnv)
	if path == "" {
		t.Skip("child process of TestKillGroupCommit")
	}
	err := audittest.WriteCheckpointsUntilKilled(groupedAudited(t, path).Saver)
	fmt.Fprintln(os.Stderr, "writer:", err)
	os.Exit(2)
}

// TestKillGroupCommit kills (SIGKILL) a process whose 16 writers' audited
// puts and put_writes are group-committed: every acknowledged write is
// stored with its record, no record names a write that is not stored,
// and the trail verifies.
func TestKillGroupCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	for round := range 2 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "data.db")
			groupedAudited(t, path) // the tables, before the child starts
			cmd := exec.Command(os.Args[0], "-test.run=^TestKillGroupCommitChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), killGroupEnv+"="+path)
			audittest.KillCheckpointWriter(t, cmd, 300+round*250, func(t *testing.T) audittest.InTx { return groupedAudited(t, path) })
		})
	}
}
