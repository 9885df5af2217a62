package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// existingOnly are the commands that write no new data: they open existing
// databases only.
var existingOnly = [][]string{
	{"threads", "list"},
	{"threads", "show", "t1"},
	{"threads", "history", "t1"},
	{"threads", "export", "t1"},
	{"threads", "fork", "t1", "--checkpoint", "1ef"},
	{"threads", "delete", "t1"},
	{"threads", "delete-checkpoint", "t1", "--checkpoint", "1ef"},
	{"threads", "sweep", "--keep-latest", "1"},
	{"store", "get", "users", "u", "k"},
	{"store", "search"},
	{"store", "list", "users", "u"},
	{"store", "namespaces"},
	{"store", "delete", "users", "u", "k"},
	{"store", "delete-prefix", "users"},
	{"store", "reembed"},
	{"audit", "show"},
	{"audit", "verify"},
	{"keys", "census"},
	{"keys", "reencrypt"},
	{"keys", "rotate-kek"},
	{"keys", "rotate-subject", "u"},
	{"keys", "readmit", "u"},
	{"forget", "u"},
}

// dirEntries lists dir's files.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestMissingDatabase: a command that writes no new data, run on a SQLite
// path that does not exist, says which path was not found, exits 1 and
// creates nothing: neither the database nor its key and audit files.
func TestMissingDatabase(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "typo.db")
	env := []string{"MEMVAULT_DB=" + db, "LANGGRAPH_AES_KEY=" + testKey, "MEMVAULT_AUDIT=true", "MEMVAULT_SUBJECT_NAMESPACE=users"}
	for _, args := range existingOnly {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := cli(t, env, "", args...).must(t, 1)
			if !strings.Contains(r.stderr, `"`+db+`"`) || !strings.Contains(r.stderr, "does not exist") {
				t.Fatalf("stderr does not name the missing database %s: %q", db, r.stderr)
			}
			if r.stdout != "" {
				t.Fatalf("stdout: %q", r.stdout)
			}
			if got := dirEntries(t, dir); len(got) != 0 {
				t.Fatalf("%v created %v", args, got)
			}
		})
	}

	// A command that writes creates the database, its key and audit files;
	// from then on the others work.
	cli(t, env, "", "store", "put", "users", "u", "k", `{"v": 1}`).must(t, 0)
	if r := cli(t, env, "", "threads", "list").must(t, 0); !strings.Contains(r.stdout, "no threads") {
		t.Fatalf("threads list: %q", r.stdout)
	}
	cli(t, env, "", "audit", "verify").must(t, 0)

	// An audit trail or a key table that went missing is not replaced by an
	// empty one (which verify would call intact).
	for _, side := range []struct {
		path string
		args []string
	}{{db + ".audit", []string{"audit", "verify"}}, {db + ".keys", []string{"store", "get", "users", "u", "k"}}} {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if err := os.Remove(side.path + suffix); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
		}
		r := cli(t, env, "", side.args...).must(t, 1)
		if !strings.Contains(r.stderr, `"`+side.path+`"`) || !strings.Contains(r.stderr, "does not exist") {
			t.Fatalf("%v: stderr does not name %s: %q", side.args, side.path, r.stderr)
		}
		if _, err := os.Stat(side.path); !os.IsNotExist(err) {
			t.Fatalf("%v created %s (%v)", side.args, side.path, err)
		}
	}
}

// TestMissingPostgresTables is TestMissingDatabase on PostgreSQL, where a
// schema without the checkpointer's and the store's tables is the missing
// database: the commands say so and create neither tables nor schemas.
func TestMissingPostgresTables(t *testing.T) {
	dsn := pgtest.SchemaDSN(t)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	// Relations in the test's schema, plus whether a schema "typo" exists.
	relations := func() int {
		var n int
		if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = current_schema()) + (SELECT count(*) FROM pg_namespace WHERE nspname = 'typo')`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	env := []string{"MEMVAULT_DSN=" + dsn, "LANGGRAPH_AES_KEY=" + testKey}
	for _, args := range existingOnly {
		if args[0] == "forget" || args[1] == "rotate-subject" || args[1] == "readmit" || args[1] == "rotate-kek" || args[0] == "audit" {
			continue // need per-subject keys or the audit trail, which the schemas below would share
		}
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := cli(t, env, "", args...).must(t, 1)
			if !strings.Contains(r.stderr, "has no checkpointer or store tables") {
				t.Fatalf("stderr: %q", r.stderr)
			}
			if n := relations(); n != 0 {
				t.Fatalf("%v created %d relations or schemas", args, n)
			}
		})
	}
	r := cli(t, env, "", "--schema", "typo", "threads", "list").must(t, 1)
	if !strings.Contains(r.stderr, `in schema "typo"`) {
		t.Fatalf("stderr does not name the schema: %q", r.stderr)
	}
	if n := relations(); n != 0 {
		t.Fatalf("created %d relations or schemas", n)
	}

	cli(t, env, "", "migrate").must(t, 0)
	if r := cli(t, env, "", "threads", "list").must(t, 0); !strings.Contains(r.stdout, "no threads") {
		t.Fatalf("threads list: %q", r.stdout)
	}
}
