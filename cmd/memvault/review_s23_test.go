package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// TestReviewS23EnvDBAndDatabaseURLBothSet (session 23 review): session 22
// made `--db x.db --dsn …` a usage error because the server was used and
// --db silently ignored. The same two settings from the environment —
// MEMVAULT_DB exported for memvault, DATABASE_URL exported for another
// program (the generic name Heroku, Rails, Prisma and most PaaS set) —
// still run on the server without a word: `threads import` writes the
// file's threads into that other database and exits 0, and the SQLite
// file the user named is never created. (README: "when unset the SQLite
// file is used" documents the precedence; nothing tells the user.)
func TestReviewS23EnvDBAndDatabaseURLBothSet(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "agent.db")
	in := writeLines(t, chainExport(t, "env-both", 2))
	env := []string{"MEMVAULT_DB=" + db, "DATABASE_URL=" + pgtest.SchemaDSN(t), "LANGGRAPH_AES_KEY=" + testKey}
	r := cli(t, env, "", "threads", "import", in)
	if r.code == 2 || strings.Contains(r.stderr, "MEMVAULT_DB") {
		return // refused, or the user is told: the promise holds
	}
	// Or MEMVAULT_DB, named for memvault, wins over the generic
	// DATABASE_URL: the threads are in the file the user named.
	if r.code == 0 {
		l := cli(t, []string{"MEMVAULT_DB=" + db, "LANGGRAPH_AES_KEY=" + testKey}, "", "threads", "list")
		if l.code == 0 && strings.Contains(l.stdout, "env-both") {
			return
		}
	}
	_, statErr := os.Stat(db)
	t.Fatalf("MEMVAULT_DB=%s and DATABASE_URL both set: threads import exit %d, stdout %q, stderr %q; %s exists: %v — "+
		"the threads went to DATABASE_URL's server and MEMVAULT_DB was ignored without a word", db, r.code, r.stdout, r.stderr, db, statErr == nil)
}

// TestReviewS23FailedExportPipedIntoImportSucceeds (session 23 review):
// `memvault threads export a typo | memvault --db new.db threads import -`
// (or README's `export … > f.jsonl` then `import f.jsonl` in a script
// without set -e; import reads - as stdin). Export fails
// on the typo (exit 1) and, its output buffered, writes nothing of "a";
// import reads the empty stream and reports success: "imported 0
// checkpoints … into 0 threads", exit 0 — the pipeline's status without
// pipefail (new.db is at least not created). A successful export always holds a line
// (a thread with no checkpoint is refused), so an empty thread file can
// only be a failure upstream: it deserves an error, not a success.
func TestReviewS23FailedExportPipedIntoImportSucceeds(t *testing.T) {
	env := sqliteEnv(t)
	cli(t, env, "", "threads", "import", writeLines(t, chainExport(t, "a", 2))).must(t, 0)
	exp := cli(t, env, "", "threads", "export", "a", "typo")
	if exp.code == 0 {
		t.Fatalf("export of a missing thread: exit 0")
	}
	target := filepath.Join(t.TempDir(), "new.db")
	r := cli(t, []string{"MEMVAULT_DB=" + target, "LANGGRAPH_AES_KEY=" + testKey}, exp.stdout, "threads", "import", "-")
	if r.code != 0 {
		return // refused: the promise holds
	}
	_, err := os.Stat(target)
	t.Fatalf("export failed (exit %d, %d bytes on stdout: %q); import of its output: exit 0, %q, and %s created: %v",
		exp.code, len(exp.stdout), strings.TrimSpace(exp.stderr), strings.TrimSpace(r.stdout), filepath.Base(target), err == nil)
}

// TestReviewS23ThreadsListNegativeLimit (session 23 review): `threads
// history --limit -1` and `store search --limit -1` are usage errors
// (exit 2); `threads list --limit -1` lists every thread and exits 0 —
// a typo'd "--limit -10" for "--limit 10" prints the whole database.
func TestReviewS23ThreadsListNegativeLimit(t *testing.T) {
	env := sqliteEnv(t)
	for _, th := range []string{"a", "b", "c"} {
		cli(t, env, "", "threads", "import", writeLines(t, chainExport(t, th, 1))).must(t, 0)
	}
	cli(t, env, "", "threads", "history", "a", "--limit", "-1").must(t, 2)
	r := cli(t, env, "", "threads", "list", "--limit", "-1")
	if r.code != 2 {
		t.Fatalf("threads list --limit -1: exit %d, stdout %q; want a usage error (exit 2) as threads history gives", r.code, r.stdout)
	}
}
