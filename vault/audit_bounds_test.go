package vault

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/durable"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/internal/sqlitedb"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/store"
)

// TestHugeReadSubjectBounded: session 18 bounded a record's target
// (audit.MaxTargetBytes: "a caller who picks ids cannot grow the
// append-only trail by megabytes per read"), but not its subject. With
// per-subject keys by thread separator (or namespace prefix) a read's
// subject is a part of the id the caller picks, so a GetTuple of thread
// "<8 MiB>:x" — or a Get under ("users", "<8 MiB>") — still appends
// megabytes to the trail per read, which nothing can ever delete.
func TestHugeReadSubjectBounded(t *testing.T) {
	ctx := context.Background()
	c := config.Default()
	c.DBPath = filepath.Join(t.TempDir(), "agent.db")
	c.Keys.Primary = testkeys.Key
	c.Subjects.ThreadSeparator = ":"
	c.Subjects.NamespacePrefix = []string{"users"}
	c.Audit = true
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	huge := strings.Repeat("s", 8<<20)
	_, err = h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: huge + ":x"})
	t.Logf("GetTuple(thread of an 8 MiB subject): %.200v", err)
	_, err = h.Store.Get(ctx, store.Namespace{"users", huge}, "k")
	t.Logf("Get(namespace of an 8 MiB subject): %.200v", err)
	if err := h.Audit.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	total, n := 0, 0
	if err := h.Audit.Records(ctx, audit.Filter{}, func(r audit.Record) error {
		total += len(r.Target) + len(r.Subject) + len(r.KeyID)
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	const bound = 64 << 10
	if total > bound {
		t.Fatalf("two reads naming an 8 MiB subject added %d bytes to the append-only trail in %d records (want at most %d: the target is bounded by audit.MaxTargetBytes, the subject is not)", total, n, bound)
	}
}

// TestDurableFailedWriteLeavesNoRecord: the README promises that where the
// trail shares the data's database (PostgreSQL always, SQLite when
// MEMVAULT_AUDIT_TABLE is the data file) "a write that stores nothing ...
// or fails leaves no record". With MEMVAULT_DURABILITY=async or exit,
// vault.Open puts the durable saver inside the audit trail, so a put is
// recorded when it is queued: one the database then refuses is never
// stored, its failure surfaces at the next call, and the trail keeps a
// checkpoint.write record of it. Sync is the control.
func TestDurableFailedWriteLeavesNoRecord(t *testing.T) {
	for _, mode := range []durable.Mode{durable.Sync, durable.Exit} {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := context.Background()
			c := config.Default()
			c.DBPath = filepath.Join(t.TempDir(), "agent.db")
			c.AuditTable = c.DBPath // records in the writes' transactions
			c.Keys.Primary = testkeys.Key
			c.Audit = true
			c.Durability = mode
			h, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			db, err := sqlitedb.Open(c.DBPath, sqlitedb.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			// The database refuses this thread's checkpoints (a full
			// disk, a constraint, a lost connection would do as well).
			if err := db.Write(ctx, func(tx *sql.Tx) error {
				_, err := tx.Exec(`CREATE TRIGGER refuse_doomed BEFORE INSERT ON checkpoints WHEN NEW.thread_id = 'doomed'
BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"a": "1"},
				ChannelVersions: map[string]string{"a": h.Saver.NextVersion("")}}
			_, perr := h.Saver.Put(ctx, checkpointer.Config{ThreadID: "doomed"}, cp, nil, cp.ChannelVersions)
			_, gerr := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "doomed"})
			if perr == nil && gerr == nil {
				t.Fatal("the refused put surfaced nowhere")
			}
			if err := h.Audit.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			n := 0
			if err := h.Audit.Records(ctx, audit.Filter{}, func(r audit.Record) error {
				if r.Op == audit.OpCheckpointWrite && r.Target == "doomed" {
					n++
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Fatalf("durability %s: a put the database refused (Put = %v; next call = %.160v) left %d %s record(s) in a trail that shares the data file (want none: \"a write that ... fails leaves no record\")",
					mode, perr, gerr, n, audit.OpCheckpointWrite)
			}
		})
	}
}
