package vault

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
)

// TestS28bVaultLoneReadsRecorded: through vault.Open with the audit trail
// in the data's database (PostgreSQL: its own schema on the data pool;
// SQLite: MEMVAULT_AUDIT_TABLE naming the data file), lone reads carry
// their records in their own statements: each GetTuple, GetTuple by id and
// List(10) that returned carol's checkpoint is recorded once, under carol,
// and the trail verifies.
func TestS28bVaultLoneReadsRecorded(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			c := subjectsConfigOn(t, backend == "postgres")
			c.Audit = true
			if backend == "sqlite" {
				c.AuditTable = c.DBPath
			}
			h, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			if h.Pool != nil {
				// Each pending insert keeps current_query(): the read's
				// statement when the record rides in it.
				for _, sql := range []string{
					`CREATE TABLE s28b_seen (n serial, q text)`,
					`CREATE FUNCTION s28b_seen_f() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN INSERT INTO s28b_seen (q) VALUES (current_query()); RETURN NEW; END$$`,
					`CREATE TRIGGER s28b_seen_t AFTER INSERT ON ` + pgx.Identifier{c.AuditTable, "memvault_audit_pending"}.Sanitize() + ` FOR EACH ROW EXECUTE FUNCTION s28b_seen_f()`,
				} {
					if _, err := h.Pool.Exec(ctx, sql); err != nil {
						t.Fatal(err)
					}
				}
			}
			cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": "carol notes"},
				ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
			if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: "carol:1"}, cp, nil, cp.ChannelVersions); err != nil {
				t.Fatal(err)
			}
			for _, cfg := range []checkpointer.Config{{ThreadID: "carol:1"}, {ThreadID: "carol:1", CheckpointID: cp.ID}} {
				if tup, err := h.Saver.GetTuple(ctx, cfg); err != nil || tup == nil {
					t.Fatalf("GetTuple(%+v) = %v, %v", cfg, tup, err)
				}
			}
			n := 0
			for tup, err := range h.Saver.List(ctx, &checkpointer.Config{ThreadID: "carol:1"}, checkpointer.ListOptions{Limit: 10}) {
				if err != nil {
					t.Fatal(err)
				}
				if tup != nil {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("List(10) yielded %d", n)
			}
			if h.Pool != nil {
				var inRead int
				if err := h.Pool.QueryRow(ctx, `SELECT count(*) FROM s28b_seen WHERE q LIKE 'WITH record\_ AS%'`).Scan(&inRead); err != nil {
					t.Fatal(err)
				}
				if inRead != 3 {
					t.Errorf("%d of the 3 lone reads' records rode in the read's statement", inRead)
				}
			}
			if err := h.Audit.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			reads := 0
			if err := h.Audit.Records(ctx, audit.Filter{Subject: "carol"}, func(r audit.Record) error {
				if r.Op == audit.OpCheckpointRead && r.Target == "carol:1" {
					reads++
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if reads != 3 {
				t.Fatalf("%d read records of carol:1 under carol, want 3", reads)
			}
			if _, err := h.Audit.Verify(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
