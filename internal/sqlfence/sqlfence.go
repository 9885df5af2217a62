// Package sqlfence runs a write's fences on SQLite, for the checkpointer's
// and the store's drivers alike, inside the write's transaction (which
// holds the database's write lock): the check of the keys in the key
// table (always another file), then the fence's statements — the data
// database's erasure guard (keys.ErasureGuard), a query of one boolean
// that is true when it refuses the write. Running the guard on the write's
// own connection costs a statement; a read on another connection would
// begin a read transaction (several system calls) on every write.
package sqlfence

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/memvault/memvault/keys"
)

// Statement is one statement of a fence and its arguments: the underlying
// type of checkpointer.FenceStatement and store.FenceStatement.
type Statement = struct {
	SQL  string
	Args []any
}

// Fence is a write's fence as a contract's seam hands it to a driver
// (checkpointer.WriteFence, store.WriteFence).
type Fence[S ~Statement] interface {
	Check(ctx context.Context) error
	Statements() ([]S, bool)
}

// Querier is what the statements run on: the write's transaction.
type Querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Run runs fs in tx, a write transaction holding the write lock: a check
// of their keys unless their statements fence the keys, then their
// statements. A write they refuse fails wrapping keys.ErrSubjectErased.
func Run[S ~Statement, F Fence[S]](ctx context.Context, tx Querier, fs []F) error {
	for _, f := range fs {
		stmts, inSQL := f.Statements()
		if !inSQL {
			if err := f.Check(ctx); err != nil {
				return err
			}
		}
		for _, st := range stmts {
			var refused bool
			if err := tx.QueryRowContext(ctx, Statement(st).SQL, Statement(st).Args...).Scan(&refused); err != nil {
				return fmt.Errorf("write fence: %w", err)
			}
			if refused {
				return fmt.Errorf("the data database records an erasure of subject %v that the key table does not count "+
					"(a copy or a backup of the key table taken before it): %w", Statement(st).Args[0], keys.ErrSubjectErased)
			}
		}
	}
	return nil
}
