package pgfence_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/internal/pgfence"
	"github.com/memvault/memvault/keys"
)

// sqlGuard fences in SQL: its statement raises inside the write's batch
// when the subject's key row is gone, so no separate check is needed.
type sqlGuard struct{ subject string }

func (sqlGuard) Check(context.Context) error { return nil }

func (g sqlGuard) Statements() ([]pgfence.Statement, bool) {
	return []pgfence.Statement{{SQL: `SELECT memvault_fence($1)`, Args: []any{g.subject}}}, true
}

// keyCheck fences with a check only: its key table lives in another
// database, which no statement of this one can lock.
type keyCheck struct{ erased bool }

func (k keyCheck) Check(context.Context) error {
	if k.erased {
		return fmt.Errorf("subject carol: %w", keys.ErrSubjectErased)
	}
	return nil
}

func (keyCheck) Statements() ([]pgfence.Statement, bool) { return nil, false }

// A driver queues the fences' statements ahead of its own in the write's
// batch. Queue reports whether the statements fence everything; when they
// do not, the write runs in a transaction that first runs the checks (Send
// and InTx), which is where an erased subject's write stops. Send, Exec and
// Drain need a PostgreSQL server (their tests use memvaulttest/pgtest),
// so this example runs the part that does not.
func Example() {
	ctx := context.Background()

	b := &pgx.Batch{}
	inSQL := pgfence.Queue(b, []sqlGuard{{"alice"}})
	b.Queue(`INSERT INTO store (prefix, key, value) VALUES ($1, $2, $3)`, "users.alice", "k", `{}`)
	fmt.Println(b.Len(), "statements; fenced in SQL:", inSQL)

	b = &pgx.Batch{}
	fences := []pgfence.Fence[pgfence.Statement]{sqlGuard{"carol"}, keyCheck{erased: true}}
	inSQL = pgfence.Queue(b, fences)
	fmt.Println(b.Len(), "statements; fenced in SQL:", inSQL)
	if !inSQL {
		err := pgfence.Check(ctx, fences)
		fmt.Println(errors.Is(err, keys.ErrSubjectErased))
	}
	// Output:
	// 2 statements; fenced in SQL: true
	// 1 statements; fenced in SQL: false
	// true
}
