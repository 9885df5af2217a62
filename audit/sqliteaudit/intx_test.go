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

// TestKillAuditedWriterChild is the process TestKillAuditedWriter kills.
func TestKillAuditedWriterChild(t *testing.T) {
	var path string
	if !childproc.Arg(t, &path) {
		t.Skip("child process of TestKillAuditedWriter")
	}
	e := inTx(t, path)
	err := audittest.WriteCheckpointsUntilKilled(e.Saver)
	fmt.Fprintln(os.Stderr, "writer:", err)
	os.Exit(2)
}

// TestKillAuditedWriter kills (SIGKILL) a process in the middle of audited
// puts and put_writes on a SQLite file holding the trail: every
// acknowledged write is stored with its record, no record names a write
// that is not stored, and the trail verifies once what was left pending
// is chained.
func TestKillAuditedWriter(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	for round := range 3 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "data.db")
			inTx(t, path) // creates the tables before the child starts
			child := childproc.Start(t, "TestKillAuditedWriterChild", path)
			audittest.KillCheckpointWriter(t, child, 300+round*250, func(t *testing.T) audittest.InTx { return inTx(t, path) })
		})
	}
}

// TestReads: on SQLite, with the trail in the data file, a read's record
// is a pending record committed by itself (audittest.RunReads).
func TestReads(t *testing.T) {
	audittest.RunReads(t, func(t *testing.T) audittest.InTx {
		return inTx(t, filepath.Join(t.TempDir(), "data.db"))
	})
}

// TestKillAuditedReaderChild is the process TestKillAuditedReader kills.
func TestKillAuditedReaderChild(t *testing.T) {
	var path string
	if !childproc.Arg(t, &path) {
		t.Skip("child process of TestKillAuditedReader")
	}
	e := inTx(t, path)
	err := audittest.ReadCheckpointsUntilKilled(e.Saver)
	fmt.Fprintln(os.Stderr, "reader:", err)
	os.Exit(2)
}

// TestKillAuditedReader kills (SIGKILL) a process in the middle of audited
// reads on a SQLite file holding the trail: the trail verifies as left,
// and every acknowledged read has its record once what was left pending
// is chained.
func TestKillAuditedReader(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	for round := range 3 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "data.db")
			inTx(t, path) // creates the tables before the child starts
			child := childproc.Start(t, "TestKillAuditedReaderChild", path)
			audittest.KillCheckpointReader(t, child, 300+round*250, func(t *testing.T) audittest.InTx { return inTx(t, path) })
		})
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
