package pgkeys_test

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/keys/pgkeys"
)

// New does not connect; Setup creates the table, here in a schema apart
// from the data's.
func ExampleNew() {
	pool, err := pgxpool.New(context.Background(), "postgres://memvault@127.0.0.1:1/none")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pool.Close()
	_, err = pgkeys.New(pool, pgkeys.Options{Schema: "memvault_keys"})
	fmt.Println(err)
	// Output: <nil>
}
