package pgmigrate_test

import (
	"fmt"
	"testing/fstest"

	"github.com/memvault/memvault/internal/pgmigrate"
)

// ExampleLoad reads a set's statements from numbered .sql files, with the
// table names filled in.
func ExampleLoad() {
	fsys := fstest.MapFS{
		"migrations/store/00.sql": {Data: []byte("CREATE TABLE IF NOT EXISTS {store} (k text PRIMARY KEY)\n")},
		"migrations/store/01.sql": {Data: []byte("CREATE INDEX CONCURRENTLY IF NOT EXISTS store_k ON {store} (k)\n")},
	}
	stmts, err := pgmigrate.Load(fsys, "migrations/store", map[string]string{"store": `"app"."store"`})
	if err != nil {
		panic(err)
	}
	for v, s := range stmts {
		fmt.Println(v, s)
	}
	// Output:
	// 0 CREATE TABLE IF NOT EXISTS "app"."store" (k text PRIMARY KEY)
	// 1 CREATE INDEX CONCURRENTLY IF NOT EXISTS store_k ON "app"."store" (k)
}
