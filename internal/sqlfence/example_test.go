package sqlfence_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/memvault/memvault/internal/sqlfence"
	"github.com/memvault/memvault/internal/sqlitedb"
	"github.com/memvault/memvault/keys"
)

// guard is a fence in the shape of keys.ErasureGuard's: no key check
// (its statements fence the keys), one query of one boolean that is true
// when the data database records an erasure of the write's subject.
type guard struct{ subject string }

func (guard) Check(context.Context) error { return nil }

func (g guard) Statements() ([]sqlfence.Statement, bool) {
	return []sqlfence.Statement{{SQL: guardSQL, Args: []any{g.subject}}}, true
}

const guardSQL = `SELECT EXISTS (SELECT 1 FROM erased WHERE subject = ?)`

// A driver runs a write's fences first in the write's transaction: a
// write for a live subject goes on, one for an erased subject fails with
// keys.ErrSubjectErased and its transaction is rolled back.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "memvault-sqlfence")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	pool, err := sql.Open(sqlitedb.DriverName, "file:"+filepath.Join(dir, "data.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pool.Close()
	pool.SetMaxOpenConns(1) // a writer pool, as sqlitedb keeps one
	if _, err := pool.ExecContext(ctx, `CREATE TABLE erased (subject TEXT PRIMARY KEY);
INSERT INTO erased VALUES ('bob')`); err != nil {
		fmt.Println(err)
		return
	}
	// Prepared once as the guard opens, outside any write transaction.
	if err := sqlfence.Prepare(ctx, pool, guardSQL); err != nil {
		fmt.Println(err)
		return
	}
	defer sqlfence.Unprepare(pool, guardSQL)

	for _, subject := range []string{"alice", "bob"} {
		tx, err := pool.BeginTx(ctx, nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		err = sqlfence.Run(ctx, tx, pool, []guard{{subject}})
		_ = tx.Rollback() // the write itself would follow here
		fmt.Println(subject, err == nil, errors.Is(err, keys.ErrSubjectErased))
	}
	// Output:
	// alice true false
	// bob false true
}
