package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestForgetRefusesSubjectOwningNothing: `forget carlo`, a typo for carol,
// printed an erasure receipt and exited 0 — a receipt that reads like an
// erasure (only a hint line said no key existed), while carol's data
// stayed. A subject that owns nothing here (no data key, no erasure
// begun, no thread, no memory) is refused now, exit 1, with nothing
// recorded (no audit record, no erasure: carlo can still get keys);
// --allow-empty erases it anyway, and a rerun of a begun erasure runs.
func TestForgetRefusesSubjectOwningNothing(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	env := []string{"MEMVAULT_DB=" + db, "LANGGRAPH_AES_KEY=" + testKey, "MEMVAULT_AUDIT=true",
		"MEMVAULT_SUBJECT_NAMESPACE=users", "MEMVAULT_SUBJECT_THREAD_SEPARATOR=:"}
	cli(t, env, "", "store", "put", "users", "carol", "diet", `{"v": "no peanuts"}`).must(t, 0)

	for _, args := range [][]string{{"forget", "carlo"}, {"--json", "forget", "carlo"}} {
		r := cli(t, env, "", args...).must(t, 1)
		if r.stdout != "" || strings.Contains(r.stderr, "receipt") || !strings.Contains(r.stderr, "owns nothing") ||
			!strings.Contains(r.stderr, `"carlo"`) || !strings.Contains(r.stderr, "--allow-empty") {
			t.Fatalf("%v: stdout %q, stderr %q", args, r.stdout, r.stderr)
		}
	}
	if out := cli(t, env, "", "audit", "show", "--subject", "carlo").must(t, 0).stdout; strings.Contains(out, "erase") {
		t.Fatalf("the refused forget was recorded:\n%s", out)
	}
	// carlo was not erased: he can get keys, and carol's data is there.
	cli(t, env, "", "store", "put", "users", "carlo", "k", `{"v": 1}`).must(t, 0)
	if out := cli(t, env, "", "store", "get", "users", "carol", "diet").must(t, 0).stdout; !strings.Contains(out, "no peanuts") {
		t.Fatalf("carol's memory: %s", out)
	}

	// A subject with a key and a memory is forgotten.
	cli(t, env, "", "forget", "carol").must(t, 0)
	// A rerun of a begun erasure runs (it finishes a pending one).
	cli(t, env, "", "forget", "carol").must(t, 0)
	// --allow-empty erases a subject that owns nothing.
	r := cli(t, env, "", "forget", "--allow-empty", "nobody").must(t, 0)
	if !strings.Contains(r.stdout, "erasure receipt") || !strings.Contains(r.stdout, "no data key of the subject existed") {
		t.Fatalf("forget --allow-empty: %s", r.stdout)
	}
}
