package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// The careless user's first hour, second pass (session 22): each test is a
// suspicion the session-21 review left untested.

// dirNames lists the names in dir, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// TestCarelessRefusedImportLeavesNothing: a thread file that import
// refuses (a line that is not JSON; a checkpoint whose parent is nowhere)
// gets the error alone — no "importing checkpoints: done, 0 checkpoints"
// line that reads as a success — a non-zero exit, and no new file: not the
// database, nor its key or audit file. On PostgreSQL no table is made (the
// schema still opens as "not found").
func TestCarelessRefusedImportLeavesNothing(t *testing.T) {
	good := chainExport(t, "refused", 3)
	orphan := slices.Clone(good[1:]) // its first checkpoint's parent is in no file and no target
	for _, tc := range []struct {
		name  string
		lines []string
	}{
		{"not JSON", []string{good[0], "this is not json"}},
		{"parent missing", orphan},
	} {
		t.Run("sqlite/"+tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "in.jsonl")
			if err := os.WriteFile(in, []byte(strings.Join(tc.lines, "\n")+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			env := []string{"MEMVAULT_DB=" + filepath.Join(dir, "m.db"), "LANGGRAPH_AES_KEY=" + testKey,
				"MEMVAULT_AUDIT=true", "MEMVAULT_SUBJECT_THREAD_SEPARATOR=:"}
			r := cli(t, env, "", "threads", "import", in)
			checkRefusal(t, r)
			if got := dirNames(t, dir); !slices.Equal(got, []string{"in.jsonl"}) {
				t.Errorf("a refused import left files behind: %q", got)
			}
			// The good file still imports into the same (new) path.
			if err := os.WriteFile(in, []byte(strings.Join(good, "\n")+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			cli(t, env, "", "threads", "import", in).must(t, 0)
		})
		t.Run("postgres/"+tc.name, func(t *testing.T) {
			env := []string{"MEMVAULT_DSN=" + pgtest.SchemaDSN(t), "LANGGRAPH_AES_KEY=" + testKey}
			r := cli(t, env, "", "threads", "import", writeLines(t, tc.lines))
			checkRefusal(t, r)
			r = cli(t, env, "", "threads", "list").must(t, 1)
			if !strings.Contains(r.stderr, "database not found") {
				t.Errorf("after a refused import the schema has tables: threads list says %q", r.stderr)
			}
		})
	}
}

// checkRefusal: exit 1 and one line on stderr, the error.
func checkRefusal(t *testing.T, r result) {
	t.Helper()
	if r.code != 1 {
		t.Errorf("refused import: exit %d, want 1\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if r.stdout != "" {
		t.Errorf("refused import printed on stdout: %q", r.stdout)
	}
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "line ") {
		t.Errorf("refused import: stderr should be the error alone (one line naming the line), got:\n%s", r.stderr)
	}
}

// TestCarelessImportLineLimit: a thread file line longer than --max-line
// (16 MiB by default) is refused naming the line, exit 1 like any bad
// line, before anything is written; a larger --max-line accepts it.
func TestCarelessImportLineLimit(t *testing.T) {
	lines := chainExport(t, "long-line", 3)
	// Line 2 carries a pending write of 200 KiB.
	big := strings.Repeat("x", 200<<10)
	lines[1] = strings.Replace(lines[1], `"pending_writes":[`, `"pending_writes":[{"task_id":"big","channel":"pad","value":{"type":"json","json":"`+big+`"}},`, 1)
	in := writeLines(t, lines)
	env := sqliteEnv(t)
	r := cli(t, env, "", "threads", "import", "--max-line", "100KiB", in)
	checkRefusal(t, r)
	if want := "line 2: invalid thread file: longer than 100KiB (102400 bytes)"; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q, want it to hold %q", r.stderr, want)
	}
	if !strings.Contains(r.stderr, "--max-line") {
		t.Errorf("the refusal does not name the flag that raises the limit: %q", r.stderr)
	}
	cli(t, env, "", "threads", "list").must(t, 1) // nothing was created
	for _, bad := range []string{"0", "-1", "12XB", "1e99"} {
		cli(t, env, "", "threads", "import", "--max-line", bad, in).must(t, 2)
	}
	cli(t, env, "", "threads", "import", "--max-line", "1MiB", in).must(t, 0)
	if n := len(historyWrites(t, env, "long-line")); n != 3 {
		t.Fatalf("imported %d checkpoints, want 3", n)
	}
}
