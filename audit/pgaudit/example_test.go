package pgaudit_test

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/audit/pgaudit"
)

// New does not connect; Setup creates the table, here in a schema of its
// own that the application's role may only insert into and read.
func ExampleNew() {
	pool, err := pgxpool.New(context.Background(), "postgres://memvault@127.0.0.1:1/none")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pool.Close()
	_, err = pgaudit.New(pool, pgaudit.Options{Schema: "memvault_audit"})
	fmt.Println(err)
	// Output: <nil>
}
