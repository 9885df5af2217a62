package pgtest_test

import (
	"fmt"

	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// Code that opens its own connections can point them at a test's schema.
// In a test, pgtest.SchemaDSN(t) does this for a fresh schema.
func ExampleWithSearchPath() {
	dsn, err := pgtest.WithSearchPath("postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "t_testfoo_0123abcd", "public")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(dsn)

	kv, _ := pgtest.WithSearchPath("host=127.0.0.1 dbname=postgres", "Mixed Case")
	fmt.Println(kv)
	// Output:
	// postgres://postgres@127.0.0.1:5432/postgres?options=-csearch_path%3Dt_testfoo_0123abcd%2Cpublic&sslmode=disable
	// host=127.0.0.1 dbname=postgres options='-csearch_path="Mixed\\ Case"'
}
