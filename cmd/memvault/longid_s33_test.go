package main

import (
	"database/sql"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestThreadsListNamesLongThreadByLength: `threads list` printed a thread
// an earlier version stored under a 64 KiB id whole, one 64 KiB line,
// where every other output names such an id by its length and the limit
// (checkpointer.NameID). The table names it so now; --json keeps the id
// exact, for a script to act on.
func TestThreadsListNamesLongThreadByLength(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	env := []string{"MEMVAULT_DB=" + db, "MEMVAULT_ENCRYPTION=off"}
	cli(t, env, "", "migrate").must(t, 0)
	hugeThread := strings.Repeat("T", 64<<10)
	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{hugeThread, "short"} {
		if _, err := raw.Exec(`INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
		VALUES (?, '', '1f0c6a2e-2222-6000-8000-000000000001', NULL, 'json',
		'{"v":4,"id":"1f0c6a2e-2222-6000-8000-000000000001","ts":"2026-01-01T00:00:00Z","channel_values":{},"channel_versions":{},"versions_seen":{}}', '{}')`, id); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	r := cli(t, env, "", "threads", "list").must(t, 0)
	if strings.Contains(r.stdout, hugeThread[:64]) || len(r.stdout) > 1000 {
		t.Errorf("threads list printed the long id (%d bytes of output): %.300s", len(r.stdout), r.stdout)
	}
	if !strings.Contains(r.stdout, strconv.Itoa(64<<10)+" bytes") || !strings.Contains(r.stdout, "short") {
		t.Errorf("threads list does not name the long thread by its length, or lost the short one: %.300s", r.stdout)
	}
	if r := cli(t, env, "", "threads", "list", "--json").must(t, 0); !strings.Contains(r.stdout, hugeThread) {
		t.Errorf("threads list --json lost the exact id (%d bytes)", len(r.stdout))
	}
}
