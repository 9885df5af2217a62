package pgkeys_test

import (
	"testing"

	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/keystest"
	"github.com/memvault/memvault/keys/pgkeys"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// TestConformanceCitus runs the suite on a Citus coordinator, where the key
// table is left a local table of the coordinator (Setup distributes
// nothing): a write's transaction holds its key's row there FOR SHARE, and
// an erasure's DELETE waits for it, as on plain PostgreSQL, whatever shards
// the write's rows go to. A reference table would put every key write
// through a two-phase commit to every node and its row locks on each
// replica, for a table that stays small.
func TestConformanceCitus(t *testing.T) {
	keystest.Run(t, func(t *testing.T) keys.Table {
		pool, schema := pgtest.CitusSchema(t)
		tb, err := pgkeys.New(pool, pgkeys.Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		if err := tb.Setup(t.Context()); err != nil {
			t.Fatal(err)
		}
		var distributed bool
		if err := pool.QueryRow(t.Context(), `SELECT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid::text LIKE '%memvault_key%')`).Scan(&distributed); err != nil {
			t.Fatal(err)
		}
		if distributed {
			t.Fatal("a key table is in Citus's metadata; want a local table of the coordinator")
		}
		return tb
	})
}
