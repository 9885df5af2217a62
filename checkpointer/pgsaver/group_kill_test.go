package pgsaver_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/audittest"
	"github.com/memvault/memvault/audit/pgaudit"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/memvaulttest/childproc"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// groupedAudited is a saver with group commit on and a trail in the same
// schema of pool, the saver audited (its records inserted in the writes'
// statements, so in the groups' batches).
func groupedAudited(t *testing.T, pool *pgxpool.Pool, setup bool) (audittest.InTx, error) {
	inner, err := pgsaver.New(pool, pgsaver.Options{GroupCommit: 64})
	if err != nil {
		return audittest.InTx{}, err
	}
	tb, err := ownTrail(t.Context(), pool)
	if err != nil {
		return audittest.InTx{}, err
	}
	if setup {
		if err := inner.Setup(t.Context()); err != nil {
			return audittest.InTx{}, err
		}
		if err := tb.Setup(t.Context()); err != nil {
			return audittest.InTx{}, err
		}
	}
	tr, err := audittest.InTxTrail(tb)
	if err != nil {
		return audittest.InTx{}, err
	}
	return audittest.InTx{Inner: inner, Saver: audit.NewSaver(inner, tr, nil), Trail: tr, Table: tb}, nil
}

// ownTrail is a trail table in the schema pool's search path puts the
// test's tables in (pgtest's schema of the test: current_schema()), named
// in Options.Schema: its own table and append lock, not whatever
// memvault_audit the search path finds first, which on a shared database
// (TEST_DATABASE_URL) can be another binary's in public.
func ownTrail(ctx context.Context, pool *pgxpool.Pool) (*pgaudit.Table, error) {
	var schema string
	if err := pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return nil, err
	}
	return pgaudit.New(pool, pgaudit.Options{Schema: schema})
}

// TestKillGroupCommitChild is the process TestKillGroupCommit kills.
func TestKillGroupCommitChild(t *testing.T) {
	var dsn string
	if !childproc.Arg(t, &dsn) {
		t.Skip("child process of TestKillGroupCommit")
	}
	pool, err := pgxpool.New(t.Context(), dsn)
	if err == nil {
		var e audittest.InTx
		if e, err = groupedAudited(t, pool, false); err == nil {
			err = audittest.WriteCheckpointsUntilKilled(e.Saver)
		}
	}
	fmt.Fprintln(os.Stderr, "writer:", err)
	os.Exit(2)
}

// TestKillGroupCommit kills (SIGKILL) a process whose 16 writers' audited
// puts and put_writes are group-committed on PostgreSQL: every
// acknowledged write is stored with its record, no record names a write
// that is not stored, and the trail verifies.
func TestKillGroupCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	for round := range 2 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			dsn := pgtest.SchemaDSN(t)
			pool, err := pgxpool.New(t.Context(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(pool.Close)
			e, err := groupedAudited(t, pool, true)
			if err != nil {
				t.Fatal(err)
			}
			child := childproc.Start(t, "TestKillGroupCommitChild", pgtest.ChildDSN(dsn))
			audittest.KillCheckpointWriter(t, child, 300+round*250, func(t *testing.T) audittest.InTx { pgtest.WaitQuiet(t, pool); return e })
			// The writers' checkpoints shared commits: fewer
			// transactions stored them than there are.
			var n, txs int
			if err := pool.QueryRow(t.Context(), `SELECT count(*), count(DISTINCT xmin::text) FROM checkpoints`).Scan(&n, &txs); err != nil {
				t.Fatal(err)
			}
			t.Logf("%d checkpoints stored by %d transactions", n, txs)
			if txs >= n {
				t.Errorf("%d checkpoints stored by %d transactions: no group commit", n, txs)
			}
		})
	}
}

// TestKillGroupCommitRowsChild is the process TestKillGroupCommitRows
// kills.
func TestKillGroupCommitRowsChild(t *testing.T) {
	var dsn string
	if !childproc.Arg(t, &dsn) {
		t.Skip("child process of TestKillGroupCommitRows")
	}
	pool, err := pgxpool.New(t.Context(), dsn)
	if err == nil {
		var s *pgsaver.Saver
		if s, err = pgsaver.New(pool, pgsaver.Options{GroupCommit: 64}); err == nil {
			err = audittest.WriteCheckpointsUntilKilled(s)
		}
	}
	fmt.Fprintln(os.Stderr, "writer:", err)
	os.Exit(2)
}

// TestKillGroupCommitRows kills (SIGKILL) a process whose 16 writers'
// puts and put_writes, with no audit record, are group-committed as rows
// (one statement for a group's puts, one for its writes): every
// acknowledged write is stored.
func TestKillGroupCommitRows(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	for round := range 2 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			dsn := pgtest.SchemaDSN(t)
			pool, err := pgxpool.New(t.Context(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(pool.Close)
			s, err := pgsaver.New(pool, pgsaver.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Setup(t.Context()); err != nil {
				t.Fatal(err)
			}
			child := childproc.Start(t, "TestKillGroupCommitRowsChild", pgtest.ChildDSN(dsn))
			audittest.KillUnauditedCheckpointWriter(t, child, 300+round*250, s)
			var n, txs int
			if err := pool.QueryRow(t.Context(), `SELECT count(*), count(DISTINCT xmin::text) FROM checkpoints`).Scan(&n, &txs); err != nil {
				t.Fatal(err)
			}
			t.Logf("%d checkpoints stored by %d transactions", n, txs)
			if txs >= n {
				t.Errorf("%d checkpoints stored by %d transactions: no group commit", n, txs)
			}
		})
	}
}
