package pgaudit

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// TestMigrationFiles holds the embedded .sql files to the statements the
// build before them ran (schema_old_test.go), statement for statement, in
// the search path's schema and in a named one: a trail or memvault_meta
// set up by either build is the same, and the versions recorded mean the
// same statements.
func TestMigrationFiles(t *testing.T) {
	same := func(t *testing.T, what string, got, old []string) {
		t.Helper()
		// Later files add steps after the earlier build's: those must
		// stay the same.
		if len(got) < len(old) {
			t.Fatalf("%s: %d statements, the earlier build ran %d", what, len(got), len(old))
		}
		for v, stmt := range got[:len(old)] {
			if s := strings.TrimSuffix(stmt, ";"); s != old[v] {
				t.Errorf("%s v%d:\n%s\nthe earlier build ran:\n%s", what, v, s, old[v])
			}
		}
	}
	for _, schema := range []string{"", "apart"} {
		tb, err := New(new(pgxpool.Pool), Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		set, err := tb.migrationSet()
		if err != nil {
			t.Fatal(err)
		}
		if set.Table != "memvault_audit_migrations" {
			t.Errorf("tracking table %q", set.Table)
		}
		same(t, "audit in "+schema, set.Statements, oldStatements(tb))
		meta, err := metaSet(schema)
		if err != nil {
			t.Fatal(err)
		}
		if meta.Table != "memvault_meta_migrations" {
			t.Errorf("tracking table %q", meta.Table)
		}
		same(t, "meta in "+schema, meta.Statements, oldMetaStatements(schema))
	}
}

// TestLockKeyOfNamedSchema pins the advisory lock key of a trail in a
// named schema to the one earlier builds took (FNV-1a of the quoted,
// qualified name): processes of both builds on one trail take turns.
func TestLockKeyOfNamedSchema(t *testing.T) {
	tb, err := New(new(pgxpool.Pool), Options{Schema: "apart"})
	if err != nil {
		t.Fatal(err)
	}
	if k, err := tb.appendLock(t.Context(), nil); err != nil || k != 5603220199034117242 {
		t.Errorf("lock key of schema apart: %d, %v; earlier builds took 5603220199034117242", k, err)
	}
}
