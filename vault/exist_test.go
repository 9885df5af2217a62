package vault

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
)

// TestMustExistSQLite: with MustExist, Open of a missing SQLite file, or of
// an existing one whose key or audit file is missing, fails with
// ErrNotFound naming the path and creates nothing.
func TestMustExistSQLite(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c := config.Default()
	c.DBPath = filepath.Join(dir, "typo.db")
	c.Keys.Primary = testkeys.Key
	c.Audit = true
	c.Subjects.NamespacePrefix = []string{"users"}
	c.MustExist = true
	files := func() []string {
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
	notFound := func(path string) {
		t.Helper()
		h, err := Open(ctx, c)
		if err == nil {
			h.Close()
			t.Fatalf("Open of missing %s succeeded", path)
		}
		if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `"`+path+`"`) {
			t.Fatalf("Open of missing %s: %v", path, err)
		}
	}
	notFound(c.DBPath)
	if got := files(); len(got) != 0 {
		t.Fatalf("Open with MustExist created %v", got)
	}

	// Without MustExist, Open creates them; then MustExist opens them.
	c.MustExist = false
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	c.MustExist = true
	if h, err = Open(ctx, c); err != nil {
		t.Fatalf("MustExist on an existing database: %v", err)
	}
	h.Close()

	for _, side := range []string{c.DBPath + ".audit", c.DBPath + ".keys"} {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if err := os.Remove(side + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
		}
		notFound(side)
		if _, err := os.Stat(side); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s was created again (%v)", side, err)
		}
	}

	// A directory is no database.
	c.DBPath, c.Audit, c.Subjects.NamespacePrefix = dir, false, nil
	if h, err := Open(ctx, c); !errors.Is(err, ErrNotFound) {
		if h != nil {
			h.Close()
		}
		t.Fatalf("Open of a directory: %v", err)
	}

	// A private in-memory database has nothing to find.
	c.DBPath = sqliteMemory
	if h, err = Open(ctx, c); err != nil {
		t.Fatalf("MustExist in memory: %v", err)
	}
	h.Close()
}

// TestMustExistPostgres: with MustExist, a schema holding neither the
// checkpointer's nor the store's tables is a missing database, and a
// missing key or audit schema is missing too: Open fails with ErrNotFound
// naming the schema, and creates no table and no schema.
func TestMustExistPostgres(t *testing.T) {
	ctx := context.Background()
	c := config.Default()
	c.DSN = pgtest.SchemaDSN(t)
	c.Keys.Primary = testkeys.Key
	c.MustExist = true
	pool, err := pgxpool.New(ctx, c.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	count := func(schema string) int {
		var n int
		if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = coalesce(nullif($1, ''), current_schema())) + (SELECT count(*) FROM pg_namespace WHERE nspname = $1)`, schema).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	notFound := func(want, schema string) {
		t.Helper()
		h, err := Open(ctx, c)
		if err == nil {
			h.Close()
			t.Fatal("Open succeeded")
		}
		if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), want) {
			t.Fatalf("Open: %v, want ErrNotFound saying %q", err, want)
		}
		if n := count(schema); n != 0 {
			t.Fatalf("Open with MustExist created %d relations or schemas in %q", n, schema)
		}
	}
	notFound("has no checkpointer or store tables on the search_path", "")
	c.Schema = "typo_mustexist"
	notFound(`has no checkpointer or store tables in schema "typo_mustexist"`, c.Schema)
	c.Schema = ""

	c.MustExist = false
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	c.MustExist = true
	if h, err = Open(ctx, c); err != nil {
		t.Fatalf("MustExist on a set-up schema: %v", err)
	}
	h.Close()

	c.Audit, c.AuditTable = true, "audit_mustexist"
	notFound(`has no audit trail in schema "audit_mustexist"`, c.AuditTable)
	c.Audit = false
	c.Subjects.NamespacePrefix, c.KeyTable = []string{"users"}, "keys_mustexist"
	notFound(`has no key table in schema "keys_mustexist"`, c.KeyTable)
}
