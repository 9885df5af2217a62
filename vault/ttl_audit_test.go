package vault

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/store"
)

// TestTTLSweepAudited: with the audit trail on, the store's background TTL
// sweeps run through the audited store, each recorded (item.delete,
// target audit.TargetTTLSweep) before it deletes: the inner store's own
// sweeper deleted expired memories with no record.
func TestTTLSweepAudited(t *testing.T) {
	ctx := t.Context()
	db := filepath.Join(t.TempDir(), "ttl.db")
	c, err := config.FromLookup(lookup(map[string]string{
		"MEMVAULT_DB":                 db,
		"MEMVAULT_EMBEDDINGS":         "none",
		"LANGGRAPH_AES_KEY":           "0123456789abcdef0123456789abcdef",
		"MEMVAULT_AUDIT":              "true",
		"MEMVAULT_TTL_DEFAULT":        "1h",
		"MEMVAULT_TTL_SWEEP_INTERVAL": "10ms",
	}))
	if err != nil {
		t.Fatal(err)
	}
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ns := store.Namespace{"users", "ann"}
	if err := h.Store.Put(ctx, ns, "note", map[string]any{"text": "expires"}); err != nil {
		t.Fatal(err)
	}
	// Let its hour pass: its expiry moved into the past.
	raw, err := sql.Open("sqlite", "file:"+db+"?_pragma=busy_timeout(10000)") // the sweeper writes meanwhile
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.ExecContext(ctx, `UPDATE store SET expires_at = 1 WHERE key = 'note'`); err != nil {
		t.Fatal(err)
	}
	for { // the sweeper deletes it (the test binary's timeout bounds the wait)
		var n int
		if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM store WHERE key = 'note'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	var deletes []string
	if err := h.Audit.Records(ctx, audit.Filter{}, func(r audit.Record) error {
		if r.Op == audit.OpItemDelete && r.Target == audit.TargetTTLSweep {
			deletes = append(deletes, r.Target)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(deletes) == 0 {
		t.Fatal("the TTL sweeper deleted an item and the trail holds no item.delete record of a TTL sweep")
	}
}
