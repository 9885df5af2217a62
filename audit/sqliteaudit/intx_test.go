package sqliteaudit_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/audittest"
	"github.com/memvault/memvault/audit/sqliteaudit"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
	"github.com/memvault/memvault/internal/sqlitedb"
	"github.com/memvault/memvault/memvaulttest/childproc"
	"github.com/memvault/memvault/store/sqlitestore"
)

// inTx is a sqlitesaver and a trail in the same file, the saver audited
// with WritesInTx.
func inTx(t *testing.T, path string) audittest.InTx {
	t.Helper()
	ctx := t.Context()
	inner, err := sqlitesaver.Open(ctx, path, sqlitesaver.Options{})
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
	exec := func(t *testing.T, stmt string, args ...any) {
		t.Helper()
		db, err := sqlitedb.Open(path, sqlitedb.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := db.Write(context.Background(), func(tx *sql.Tx) error {
			_, err := tx.Exec(stmt, args...)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	return audittest.InTx{Inner: inner, Saver: audit.NewSaver(inner, tr, nil), Trail: tr, Table: tb,
		RemoveCheckpoint: func(t *testing.T, thread, id string) {
			exec(t, `DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_id = ?`, thread, id)
		},
		RefuseRecords: func(t *testing.T, target string) {
			lit := "'" + strings.ReplaceAll(target, "'", "''") + "'"
			exec(t, `CREATE TRIGGER "refuse_`+target+`" BEFORE INSERT ON memvault_audit_pending WHEN NEW.target = `+lit+`
BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`)
		},
		ChainRows: func(t *testing.T) int {
			db, err := sqlitedb.Open(path, sqlitedb.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var n int
			if err := db.Read(context.Background(), func(tx *sql.Tx) error {
				return tx.QueryRow(`SELECT count(*) FROM memvault_audit`).Scan(&n)
			}); err != nil {
				t.Fatal(err)
			}
			return n
		},
		EditBatches: func(t *testing.T, from, to string) {
			exec(t, `UPDATE memvault_audit SET more = replace(more, ?, ?) WHERE more IS NOT NULL`, from, to)
		}}
}

// TestWritesInTx: on SQLite, with the trail in the data file, a put's and
// a put_writes' record commit in the write's own transaction
// (audittest.RunWritesInTx).
func TestWritesInTx(t *testing.T) {
	audittest.RunWritesInTx(t, func(t *testing.T) audittest.InTx {
		return inTx(t, filepath.Join(t.TempDir(), "data.db"))
	})
}

// TestReads: on SQLite, with the trail in the data file, a read's record
// is a pending record committed by itself (audittest.RunReads).
func TestReads(t *testing.T) {
	audittest.RunReads(t, func(t *testing.T) audittest.InTx {
		return inTx(t, filepath.Join(t.TempDir(), "data.db"))
	})
}

// killArg is what TestKillAuditedChild is given: its role ("writer",
// "reader" or "lone reader") and its data file.
type killArg struct{ Role, Path string }

// TestKillAuditedChild is the process TestKillAudited kills: audited puts
// and put_writes (writer) or reads (reader) until it is killed.
func TestKillAuditedChild(t *testing.T) {
	var arg killArg
	if !childproc.Arg(t, &arg) {
		t.Skip("child process of TestKillAudited")
	}
	e := inTx(t, arg.Path)
	var err error
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
// writes, and one in the middle of audited reads, on a SQLite file holding
// the trail. Writer: every acknowledged write is stored with its record,
// no record names a write that is not stored, and the trail verifies once
// what was left pending is chained. Reader: the trail verifies as left,
// and every acknowledged read has its record once that is chained. Lone
// reader: one reader, whose reads insert their records in their own write
// transactions (checkpointer.WithReadRecord), checked as reader.
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
				path := filepath.Join(t.TempDir(), "data.db")
				inTx(t, path) // creates the tables before the child starts
				child := childproc.Start(t, "TestKillAuditedChild", killArg{role, path})
				check(t, child, 300+round*250, func(t *testing.T) audittest.InTx { return inTx(t, path) })
			})
		}
	}
}

// TestStoreWritesInTx: on SQLite, with the trail in the data file, a
// store item write's record commits in the write's own transaction
// (audittest.RunStoreWritesInTx).
func TestStoreWritesInTx(t *testing.T) {
	audittest.RunStoreWritesInTx(t, func(t *testing.T) audittest.StoreInTx {
		ctx := t.Context()
		path := filepath.Join(t.TempDir(), "data.db")
		inner, err := sqlitestore.Open(ctx, path, sqlitestore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { inner.Close() })
		e := inTx(t, path)
		return audittest.StoreInTx{Inner: inner, Store: audit.NewStore(inner, e.Trail, nil), Trail: e.Trail, Table: e.Table,
			RefuseRecords: e.RefuseRecords}
	})
}
