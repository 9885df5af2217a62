package sqliteaudit_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/internal/sqlitedb"
)

// TestReviewReplayedPendingRecord: an attacker with write access to the
// database file keeps a copy of a pending audit row (here, by a trigger
// that copies every inserted row), waits until the chainer has chained it
// and deleted it, then inserts the copy again. audit/pending.go promises
// "a copied pending row cannot be chained twice"; the copy holds its MAC
// (same database, same fields), so the chainer links it a second time and
// the trail then says the write was made twice — and Verify calls the
// trail intact.
func TestReviewReplayedPendingRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.db")
	e := inTx(t, path)
	ctx := context.Background()
	exec := func(stmt string) {
		t.Helper()
		db, err := sqlitedb.Open(path, sqlitedb.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := db.Write(ctx, func(tx *sql.Tx) error {
			_, err := tx.Exec(stmt)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	// The attacker's capture of every pending row as it is inserted.
	exec(`CREATE TABLE stolen AS SELECT * FROM memvault_audit_pending WHERE 0`)
	exec(`CREATE TRIGGER steal AFTER INSERT ON memvault_audit_pending BEGIN INSERT INTO stolen SELECT * FROM memvault_audit_pending WHERE id = NEW.id; END`)

	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(1), ChannelValues: map[string]any{"a": "1"}, ChannelVersions: map[string]string{"a": "1"}}
	if _, err := e.Saver.Put(ctx, checkpointer.Config{ThreadID: "victim"}, cp, checkpointer.Metadata{}, map[string]string{"a": "1"}); err != nil {
		t.Fatal(err)
	}
	if err := e.Trail.Flush(ctx); err != nil { // chained, the pending row deleted
		t.Fatal(err)
	}
	exec(`DROP TRIGGER steal`)
	exec(`INSERT INTO memvault_audit_pending SELECT * FROM stolen`) // the replay

	count := func() int {
		n := 0
		if err := e.Trail.Records(ctx, audit.Filter{}, func(r audit.Record) error {
			if r.Op == audit.OpCheckpointWrite && r.Target == "victim" {
				n++
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	flushErr := e.Trail.Flush(ctx)
	n, verr := e.Trail.Verify(ctx)
	if flushErr == nil && verr == nil {
		t.Fatalf("a pending row replayed after it was chained: Flush = nil, Verify = %d records, nil; the trail now holds %d %s records of thread %q for 1 put (want the replay refused or reported, ErrTampered)",
			n, count(), audit.OpCheckpointWrite, "victim")
	}
	if !errors.Is(flushErr, audit.ErrTampered) && !errors.Is(verr, audit.ErrTampered) {
		t.Fatalf("replayed pending row: Flush = %v, Verify = %v; want ErrTampered", flushErr, verr)
	}
}
