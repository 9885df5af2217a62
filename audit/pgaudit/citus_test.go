package pgaudit_test

import (
	"testing"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/audittest"
	"github.com/memvault/memvault/audit/pgaudit"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// TestConformanceCitus runs the audit table suite on a Citus coordinator.
// The audit table stays a local table of the coordinator: its appends are
// serialized by an advisory lock and each reads the chain's last row, so
// the chain is one sequence on one node, as on plain PostgreSQL.
func TestConformanceCitus(t *testing.T) {
	audittest.RunTable(t, func(t *testing.T) audittest.Backend {
		pool, _ := pgtest.CitusSchema(t)
		tb, err := pgaudit.New(pool, pgaudit.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := tb.Setup(t.Context()); err != nil {
			t.Fatal(err)
		}
		var distributed bool
		if err := pool.QueryRow(t.Context(), `SELECT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = to_regclass('memvault_audit'))`).Scan(&distributed); err != nil {
			t.Fatal(err)
		}
		if distributed {
			t.Fatal("memvault_audit is in Citus's metadata; want a local table of the coordinator")
		}
		return audittest.Backend{Table: tb, Put: func(t *testing.T, rs []audit.Record) { put(t, pool, rs) }}
	})
}
