package pgdb_test

import (
	"fmt"

	"github.com/memvault/memvault/internal/pgdb"
)

// Shared statements are written once with "?" and rebound for PostgreSQL.
func ExampleRebind() {
	fmt.Println(pgdb.Rebind(`UPDATE t SET v = ? WHERE k = ? AND note <> 'why?'`))
	// Output:
	// UPDATE t SET v = $1 WHERE k = $2 AND note <> 'why?'
}
