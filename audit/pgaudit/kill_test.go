package pgaudit_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/audittest"
	"github.com/memvault/memvault/memvaulttest/childproc"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// TestKillWriterChild is the process TestKillWriter kills: it appends to
// the trail from many goroutines (group commits) until it is killed.
func TestKillWriterChild(t *testing.T) {
	var dsn string
	if !childproc.Arg(t, &dsn) {
		t.Skip("child process of TestKillWriter")
	}
	pool, err := pgxpool.New(t.Context(), dsn)
	if err == nil {
		// The parent's table, and lock (ownTable).
		var tr *audit.Trail
		if tr, err = audittest.KillTrail(ownTable(t, pool)); err == nil {
			err = audittest.WriteUntilKilled(tr)
		}
	}
	fmt.Fprintln(os.Stderr, "writer:", err)
	os.Exit(2)
}

// TestKillWriter kills (SIGKILL) a process in the middle of group commits
// to a PostgreSQL trail: the trail verifies and holds every record whose
// append had returned.
func TestKillWriter(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	for round := range 3 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			dsn := pgtest.SchemaDSN(t)
			setup, err := pgxpool.New(t.Context(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(setup.Close)
			tb := ownTable(t, setup)
			if err := tb.Setup(t.Context()); err != nil {
				t.Fatal(err)
			}
			child := childproc.Start(t, "TestKillWriterChild", pgtest.ChildDSN(dsn))
			audittest.KillWriter(t, child, 300+round*250, func(t *testing.T) audit.Table { pgtest.WaitQuiet(t, setup); return tb })
		})
	}
}
