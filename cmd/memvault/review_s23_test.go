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
	_, statErr := os.Stat(db)
	t.Fatalf("MEMVAULT_DB=%s and DATABASE_URL both set: threads import exit %d, stdout %q, stderr %q; %s exists: %v — "+
		"the threads went to DATABASE_URL's server and MEMVAULT_DB was ignored without a word", db, r.code, r.stdout, r.stderr, db, statErr == nil)
}
