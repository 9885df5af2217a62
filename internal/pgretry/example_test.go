package pgretry_test

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/memvault/memvault/internal/pgretry"
)

func Example() {
	tries := 0
	err := pgretry.Do(context.Background(), func() error {
		tries++
		if tries == 1 {
			return &pgconn.PgError{Code: "40P01", Message: "deadlock detected"}
		}
		return nil
	})
	fmt.Println(tries, err)
	// Output: 2 <nil>
}
