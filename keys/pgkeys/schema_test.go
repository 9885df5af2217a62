package pgkeys

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// TestMigrationFiles holds the embedded .sql files to the statements the
// build before them ran (schema_old_test.go), statement for statement, in
// the search path's schema and in a named one: the tables and the fence
// function of a database set up by either build are the same, and the
// versions recorded in memvault_keys_migrations mean the same statements.
func TestMigrationFiles(t *testing.T) {
	for _, schema := range []string{"", "apart"} {
		tb, err := New(new(pgxpool.Pool), Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		set, err := tb.migrationSet()
		if err != nil {
			t.Fatal(err)
		}
		if set.Table != "memvault_keys_migrations" {
			t.Errorf("tracking table %q", set.Table)
		}
		old := oldStatements(tb)
		if len(set.Statements) < len(old) {
			t.Fatalf("schema %q: %d statements, the earlier build ran %d", schema, len(set.Statements), len(old))
		}
		for v, stmt := range set.Statements[:len(old)] {
			if got := strings.TrimSuffix(stmt, ";"); got != old[v] {
				t.Errorf("schema %q: v%d:\n%s\nthe earlier build ran:\n%s", schema, v, got, old[v])
			}
		}
	}
}
