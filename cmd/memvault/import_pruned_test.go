package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/checkpointer/threadfile"
)

// TestImportAfterSweep: `threads sweep --keep-latest N` leaves the oldest
// kept checkpoint with a parent that is gone; the export of that thread
// imports into another database (it used to be refused: "parent checkpoint
// … is neither earlier in the file nor in the target"), and the copy
// exports as the original does.
func TestImportAfterSweep(t *testing.T) {
	for name, envf := range importBackends(t) {
		t.Run(name, func(t *testing.T) {
			src, dst := envf(t), envf(t)
			cli(t, src, "", "threads", "import", writeLines(t, chainExport(t, "swept", 6))).must(t, 0)
			cli(t, src, "", "threads", "sweep", "--keep-latest", "2").must(t, 0)
			if got := historyWrites(t, src, "swept"); len(got) != 2 {
				t.Fatalf("after the sweep the source has %d checkpoints, want 2", len(got))
			}
			export := cli(t, src, "", "threads", "export", "swept").must(t, 0).stdout
			if n := strings.Count(export, "\n"); n != 2 {
				t.Fatalf("export has %d lines, want 2:\n%s", n, export)
			}
			file := filepath.Join(t.TempDir(), "swept.jsonl")
			if err := os.WriteFile(file, []byte(export), 0o600); err != nil {
				t.Fatal(err)
			}
			r := cli(t, dst, "", "threads", "import", file, "--json").must(t, 0)
			var st threadfile.ImportStats
			if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
				t.Fatal(err)
			}
			if st.Imported != 2 || st.Writes != 2 {
				t.Fatalf("import = %+v, want 2 checkpoints and 2 writes", st)
			}
			if again := cli(t, dst, "", "threads", "export", "swept").must(t, 0).stdout; again != export {
				t.Fatalf("the copy exports differently:\n%s\nwant\n%s", again, export)
			}
			// A thread named twice is exported once: import would refuse its
			// checkpoints on two lines.
			if twice := cli(t, src, "", "threads", "export", "swept", "swept").must(t, 0).stdout; twice != export {
				t.Fatalf("export of a thread named twice:\n%s\nwant\n%s", twice, export)
			}
		})
	}
}

// TestImportDuplicateCheckpoint: a file with one checkpoint on two lines
// (different content) is refused naming both lines, and nothing is
// written; it used to print "imported 11" while 10 were stored.
func TestImportDuplicateCheckpoint(t *testing.T) {
	for name, envf := range importBackends(t) {
		t.Run(name, func(t *testing.T) {
			env := envf(t)
			lines := chainExport(t, "dup", 10)
			lines = append(lines, strings.Replace(lines[3], `"json":3`, `"json":"changed"`, 1))
			r := cli(t, env, "", "threads", "import", writeLines(t, lines))
			if r.code != 1 || !strings.Contains(r.stderr, "line 11") || !strings.Contains(r.stderr, "already on line 4") {
				t.Fatalf("exit %d, stdout %q, stderr %q; want a refusal naming lines 11 and 4", r.code, r.stdout, r.stderr)
			}
			if got := historyWrites(t, env, "dup"); len(got) != 0 {
				t.Fatalf("after a refused import the target holds %d checkpoints, want none", len(got))
			}
		})
	}
}
