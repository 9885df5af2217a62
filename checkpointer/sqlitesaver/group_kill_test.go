package sqlitesaver_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/audittest"
	"github.com/memvault/memvault/audit/sqliteaudit"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
	"github.com/memvault/memvault/memvaulttest/childproc"
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

// TestKillGroupCommitChild is the process TestKillGroupCommit kills.
func TestKillGroupCommitChild(t *testing.T) {
	var path string
	if !childproc.Arg(t, &path) {
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
			child := childproc.Start(t, "TestKillGroupCommitChild", path)
			audittest.KillCheckpointWriter(t, child, 300+round*250, func(t *testing.T) audittest.InTx { return groupedAudited(t, path) })
		})
	}
}
