package pgaudit_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/audittest"
	"github.com/memvault/memvault/audit/pgaudit"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/memvaulttest/childproc"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/store/pgstore"
)

// ownTable is the trail's table in pool's schema (the first of its
// search path: pgtest's schema for the test), named in Options.Schema.
//
// The trail's advisory lock, which appenders take and a read alone in
// flight must find free to chain its own record, derives from the
// table's schema. Until session 39 it derived from the name as the
// Options gave it: unqualified (Options{}), one key for every trail in
// the database, so that under TEST_DATABASE_URL (one database for all
// test binaries) another binary's appender holding it made a lone read
// here leave its record to the chainer (TestAppendLockPerSchema). Every
// process of a test (its children too) calls ownTable on a pool with
// the test's search path: one schema, one lock, as production's
// processes of one trail share theirs. Tests that keep Options{}
// (TestConformance, TestPending, …) cover the unqualified name.
func ownTable(t testing.TB, pool *pgxpool.Pool) *pgaudit.Table {
	t.Helper()
	var schema string
	if err := pool.QueryRow(t.Context(), `SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	tb, err := pgaudit.New(pool, pgaudit.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// inTx is a pgsaver and a trail in the same schema of pool (the trail's
// table named in it: ownTable), the saver audited with WritesInTx.
func inTx(t *testing.T, pool *pgxpool.Pool) audittest.InTx {
	t.Helper()
	ctx := t.Context()
	inner, err := pgsaver.New(pool, pgsaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tb := ownTable(t, pool)
	if err := inner.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tb.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	tr, err := audittest.InTxTrail(tb)
	if err != nil {
		t.Fatal(err)
	}
	exec := func(t *testing.T, sql string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	return audittest.InTx{Inner: inner, Saver: audit.NewSaver(inner, tr, nil), Trail: tr, Table: tb,
		RemoveCheckpoint: func(t *testing.T, thread, id string) {
			exec(t, `DELETE FROM checkpoints WHERE thread_id = $1 AND checkpoint_id = $2`, thread, id)
		},
		RefuseRecords: func(t *testing.T, target string) {
			name := pgx.Identifier{"refuse_" + target}.Sanitize()
			check := ` CHECK (target <> '` + strings.ReplaceAll(target, "'", "''") + `')`
			exec(t, `ALTER TABLE memvault_audit_pending ADD CONSTRAINT `+name+check)
			// A read alone in flight chains its record itself: refused
			// there too (NOT VALID: records already chained stay).
			exec(t, `ALTER TABLE memvault_audit ADD CONSTRAINT `+name+check+` NOT VALID`)
		},
		BlockChain: func(t *testing.T) func() {
			// An appender stuck in its transaction: it holds the trail's
			// lock, which every appender (a group commit, a chaining run)
			// waits for and a read chaining its own record does not take
			// when it is held (Table.ChainRow).
			tx, err := pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			lock, err := tb.AppendLock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, lock); err != nil {
				t.Fatal(err)
			}
			return func() { _ = tx.Rollback(ctx) }
		},
		ChainRows: func(t *testing.T) int {
			var n int
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM memvault_audit`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		},
		EditBatches: func(t *testing.T, from, to string) {
			exec(t, `UPDATE memvault_audit SET more = replace(more, $1, $2) WHERE more IS NOT NULL`, from, to)
		}}
}

// TestWritesInTx: on PostgreSQL, a put's and a put_writes' record commit
// in the write's own statement or batch (audittest.RunWritesInTx).
func TestWritesInTx(t *testing.T) {
	audittest.RunWritesInTx(t, func(t *testing.T) audittest.InTx { return inTx(t, pgtest.Pool(t)) })
}

// TestReads: on PostgreSQL, a read's record is a pending record committed
// by itself, which waits for no appender of the chain
// (audittest.RunReads).
func TestReads(t *testing.T) {
	audittest.RunReads(t, func(t *testing.T) audittest.InTx { return inTx(t, pgtest.Pool(t)) })
}

// killArg is what TestKillAuditedChild is given: its role ("writer",
// "reader" or "lone reader") and its database.
type killArg struct{ Role, DSN string }

// TestKillAuditedChild is the process TestKillAudited kills: audited puts
// and put_writes (writer) or reads (reader) until it is killed.
func TestKillAuditedChild(t *testing.T) {
	var arg killArg
	if !childproc.Arg(t, &arg) {
		t.Skip("child process of TestKillAudited")
	}
	pool, err := pgxpool.New(t.Context(), arg.DSN)
	if err != nil {
		t.Fatal(err)
	}
	e := inTx(t, pool)
	switch arg.Role {
	case "reader":
		err = audittest.ReadCheckpointsUntilKilled(e.Saver)
	case "lone reader":
		err = audittest.ReadCheckpointsAloneUntilKilled(e.Saver)
	default:
		err = audittest.WriteCheckpointsUntilKilled(e.Saver)
	}
	fmt.Fprintln(os.Stderr, arg.Role+":", err)
	os.Exit(2)
}

// TestKillAudited kills (SIGKILL) a process in the middle of audited
// writes, and one in the middle of audited reads, on PostgreSQL. Writer:
// every acknowledged write is stored with its record, no record names a
// write that is not stored, and the trail verifies once what was left
// pending is chained. Reader: the trail verifies as left, and every
// acknowledged read has its record once that is chained. Lone reader:
// one reader, whose reads carry their records in their own statements
// (checkpointer.WithReadRecord), killed among them, checked as reader.
func TestKillAudited(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	for _, role := range []string{"writer", "reader", "lone reader"} {
		check := audittest.KillCheckpointWriter
		if role != "writer" {
			check = audittest.KillCheckpointReader
		}
		for round := range 3 {
			t.Run(fmt.Sprint(role, "/", round), func(t *testing.T) {
				dsn := pgtest.SchemaDSN(t)
				pool, err := pgxpool.New(t.Context(), dsn)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(pool.Close)
				e := inTx(t, pool)
				child := childproc.Start(t, "TestKillAuditedChild", killArg{role, pgtest.ChildDSN(dsn)})
				check(t, child, 300+round*250, func(t *testing.T) audittest.InTx { pgtest.WaitQuiet(t, pool); return e })
			})
		}
	}
}

// TestStoreWritesInTx: on PostgreSQL, a store item write's record commits
// in the write's own batch (audittest.RunStoreWritesInTx).
func TestStoreWritesInTx(t *testing.T) {
	audittest.RunStoreWritesInTx(t, func(t *testing.T) audittest.StoreInTx {
		pool := pgtest.Pool(t)
		inner, err := pgstore.New(pool, pgstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := inner.Setup(t.Context()); err != nil {
			t.Fatal(err)
		}
		e := inTx(t, pool)
		return audittest.StoreInTx{Inner: inner, Store: audit.NewStore(inner, e.Trail, nil), Trail: e.Trail, Table: e.Table,
			RefuseRecords: e.RefuseRecords}
	})
}
