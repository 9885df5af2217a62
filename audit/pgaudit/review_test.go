package pgaudit_test

import (
	"context"
	"errors"
	"testing"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// TestReviewReplayedPendingRecord: on PostgreSQL as on SQLite, a pending
// audit row copied by someone with write access to the database (here by
// a trigger, as it is inserted) and inserted again after the chainer
// chained and deleted it holds its MAC, is chained a second time, and
// Verify calls the trail intact — though audit/pending.go promises "a
// copied pending row cannot be chained twice".
func TestReviewReplayedPendingRecord(t *testing.T) {
	pool := pgtest.Pool(t)
	e := inTx(t, pool)
	ctx := context.Background()
	for _, stmt := range []string{
		`CREATE TABLE stolen AS SELECT * FROM memvault_audit_pending WITH NO DATA`,
		`CREATE FUNCTION steal() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO stolen SELECT NEW.*; RETURN NEW; END $$`,
		`CREATE TRIGGER steal AFTER INSERT ON memvault_audit_pending FOR EACH ROW EXECUTE FUNCTION steal()`,
	} {
		if _, err := pool.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(1), ChannelValues: map[string]any{"a": "1"}, ChannelVersions: map[string]string{"a": "1"}}
	if _, err := e.Saver.Put(ctx, checkpointer.Config{ThreadID: "victim"}, cp, checkpointer.Metadata{}, map[string]string{"a": "1"}); err != nil {
		t.Fatal(err)
	}
	if err := e.Trail.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{`DROP TRIGGER steal ON memvault_audit_pending`, `INSERT INTO memvault_audit_pending SELECT * FROM stolen`} {
		if _, err := pool.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	flushErr := e.Trail.Flush(ctx)
	n, verr := e.Trail.Verify(ctx)
	if flushErr == nil && verr == nil {
		writes := 0
		if err := e.Trail.Records(ctx, audit.Filter{}, func(r audit.Record) error {
			if r.Op == audit.OpCheckpointWrite && r.Target == "victim" {
				writes++
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		t.Fatalf("a pending row replayed after it was chained: Flush = nil, Verify = %d records, nil; the trail holds %d %s records of thread %q for 1 put (want the replay refused or reported, ErrTampered)",
			n, writes, audit.OpCheckpointWrite, "victim")
	}
	if !errors.Is(flushErr, audit.ErrTampered) && !errors.Is(verr, audit.ErrTampered) {
		t.Fatalf("replayed pending row: Flush = %v, Verify = %v; want ErrTampered", flushErr, verr)
	}
}
