package sqlitedbtest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/memvault/memvault/internal/sqlitedb"
	"github.com/memvault/memvault/internal/sqlitedb/sqlitedbtest"
)

// A component's schema test calls CheckUpgrade(t, component, old, steps,
// open) with the steps of the earlier build copied verbatim into the test
// (see store/sqlitestore's schema_test.go). CheckUpgrade needs a
// *testing.T, so this example runs what it compares: Dump of a database
// the earlier build made and the new one migrated, against a fresh one.
func ExampleDump() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "memvault-sqlitedbtest")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	old := []string{`CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT NOT NULL)`}
	steps := append(old, `CREATE INDEX notes_body ON notes (body)`)
	dump := func(name string, runs ...[]string) string {
		db, err := sqlitedb.Open(filepath.Join(dir, name), sqlitedb.Options{})
		if err != nil {
			return err.Error()
		}
		defer db.Close()
		for _, r := range runs {
			if err := db.Migrate(ctx, "notes", r); err != nil {
				return err.Error()
			}
		}
		d, err := sqlitedbtest.Dump(ctx, db.Reader())
		if err != nil {
			return err.Error()
		}
		return d
	}
	fresh := dump("fresh.db", steps)
	fmt.Print(fresh)
	fmt.Println("upgraded equals fresh:", dump("upgraded.db", old, steps) == fresh)

	// A step edited after it shipped: databases the earlier build made
	// keep its old text, so they differ from fresh ones.
	shipped := []string{`CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT)`}
	fmt.Println("edited step equals fresh:", dump("edited.db", shipped, steps) == fresh)
	// Output:
	// user_version 0
	// index notes_body on notes: "CREATE INDEX notes_body ON notes (body)"
	// index sqlite_autoindex_memvault_migrations_1 on memvault_migrations: ""
	// index sqlite_autoindex_notes_1 on notes: ""
	// table memvault_migrations on memvault_migrations: "CREATE TABLE memvault_migrations (\n\tcomponent TEXT NOT NULL,\n\tv INTEGER NOT NULL,\n\tapplied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,\n\tPRIMARY KEY (component, v)\n)"
	// table notes on notes: "CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT NOT NULL)"
	// rows of memvault_migrations:
	//   []interface {}{"notes", 0}
	//   []interface {}{"notes", 1}
	// rows of notes:
	// upgraded equals fresh: true
	// edited step equals fresh: false
}
