package main

import (
	"database/sql"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/memvault/memvault/checkpointer"
)

// TestLongThreadIDNotEchoed: reads accept a thread id longer than
// checkpointer.MaxIDBytes (a thread an earlier version stored must stay
// reachable), so a 64 KiB argument reached the not-found errors of
// threads export, delete, history, show and fork, which quoted it whole: one
// 64 KiB line of stderr, bound for logs. README's "Limits of identifiers":
// the error names the identifier, its length and the limit, never its
// text. An id within the limit is still quoted, so the user sees which one.
func TestLongThreadIDNotEchoed(t *testing.T) {
	env := sqliteEnv(t)
	cli(t, env, "", "migrate").must(t, 0)
	huge := strings.Repeat("S", 64<<10)
	over := strings.Repeat("T", checkpointer.MaxIDBytes+1)
	wantLen := func(id string) string { return strconv.Itoa(len(id)) + " bytes" }
	limit := strconv.Itoa(checkpointer.MaxIDBytes)
	for _, id := range []string{huge, over} {
		for _, args := range [][]string{
			{"threads", "export", id},
			{"threads", "export", id, "short-one"},
			{"threads", "delete", id},
			{"threads", "delete", "nosuch", id},
			{"threads", "history", id},
			{"threads", "show", id},
			{"threads", "show", id, "--checkpoint", huge},
			{"threads", "fork", id, "--checkpoint", "x"},
			{"threads", "fork", "nosuch", "--checkpoint", huge},
			{"threads", "history", id + "\xff"},
		} {
			long := ""
			for _, a := range args {
				if len(a) > checkpointer.MaxIDBytes && long == "" {
					long = a // the one the error is about
				}
			}
			name := strings.Join(args[:2], " ") + " <" + wantLen(long) + ">"
			r := cli(t, env, "", args...)
			if r.code != 1 && r.code != 2 {
				t.Errorf("%s: exit %d, want 1 (not found) or 2 (bad id)\nstderr: %.300s", name, r.code, r.stderr)
			}
			if strings.Contains(r.stderr, id[:64]) || strings.Contains(r.stdout, id[:64]) || strings.Contains(r.stderr, huge[:64]) {
				t.Errorf("%s: the id's text is echoed (stderr %d bytes): %.300s", name, len(r.stderr), r.stderr)
			}
			if !strings.Contains(r.stderr, wantLen(long)) || !strings.Contains(r.stderr, limit) {
				t.Errorf("%s: stderr does not name the id's length (%s) and the limit (%s): %.300s", name, wantLen(long), limit, r.stderr)
			}
			if len(r.stderr) > 1000 {
				t.Errorf("%s: %d bytes of stderr", name, len(r.stderr))
			}
		}
	}
	// Ids within the limit are still named by their text.
	for _, args := range [][]string{{"threads", "export", "nosuch"}, {"threads", "delete", "nosuch"}, {"threads", "fork", "nosuch", "--checkpoint", "cp-x"}} {
		r := cli(t, env, "", args...).must(t, 1)
		if !strings.Contains(r.stderr, `"nosuch"`) {
			t.Errorf("%v: stderr does not name the thread: %s", args, r.stderr)
		}
	}
}

// TestLongIDNotEchoedOnSuccess: the errors named a long id by its length
// (TestLongThreadIDNotEchoed), but the success lines printed it whole:
// `threads delete-checkpoint` (deleting a checkpoint that is not there
// succeeds), `threads delete` of a thread an earlier version stored under
// a long id, and `store delete` (a lookup key is not bounded either) each
// wrote one 64 KiB line. They name the id by its length and the limit now.
func TestLongIDNotEchoedOnSuccess(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	env := []string{"MEMVAULT_DB=" + db, "MEMVAULT_ENCRYPTION=off"}
	cli(t, env, "", "migrate").must(t, 0)
	huge := strings.Repeat("S", 64<<10)
	hugeThread := strings.Repeat("T", 64<<10)
	// A thread an earlier version stored (SQLite had no limit), written
	// as rows: the saver refuses to write one now.
	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
		VALUES (?, '', '1f0c6a2e-2222-6000-8000-000000000001', NULL, 'json',
		'{"v":4,"id":"1f0c6a2e-2222-6000-8000-000000000001","ts":"2026-01-01T00:00:00Z","channel_values":{},"channel_versions":{},"versions_seen":{}}', '{}')`, hugeThread); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	want := strconv.Itoa(64<<10) + " bytes"
	for _, args := range [][]string{
		{"threads", "delete-checkpoint", "short", "--checkpoint", huge},
		{"threads", "delete-checkpoint", huge, "--checkpoint", "cp"},
		{"threads", "delete", hugeThread},
		{"store", "delete", "users", "u", huge},
	} {
		name := strings.Join(args[:2], " ")
		r := cli(t, env, "", args...).must(t, 0)
		if strings.Contains(r.stdout, huge[:64]) || strings.Contains(r.stdout, hugeThread[:64]) || strings.Contains(r.stderr, huge[:64]) {
			t.Errorf("%s: the id's text is echoed (stdout %d bytes): %.300s", name, len(r.stdout), r.stdout)
		}
		if len(r.stdout)+len(r.stderr) > 1000 {
			t.Errorf("%s: %d bytes of output", name, len(r.stdout)+len(r.stderr))
		}
		if !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, "deleted") {
			t.Errorf("%s: stdout does not say what was deleted by its length (%s): %.300s", name, want, r.stdout)
		}
	}
	if r := cli(t, env, "", "threads", "list").must(t, 0); strings.Contains(r.stdout, "TTTT") {
		t.Errorf("the long thread was not deleted:\n%.300s", r.stdout)
	}
	// An id within the limit is still printed.
	if r := cli(t, env, "", "threads", "delete-checkpoint", "short", "--checkpoint", "cp-1").must(t, 0); r.stdout != "deleted checkpoint cp-1 of thread short\n" {
		t.Errorf("stdout = %q", r.stdout)
	}
}
