package sqlfence

import (
	"context"
	"database/sql"
	"fmt"
	"sync"

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

// prepared holds the statements Prepare prepared, by pool and SQL text.
var prepared struct {
	sync.Mutex
	m map[stmtKey]*preparedStmt
}

type stmtKey struct {
	pool *sql.DB
	q    string
}

type preparedStmt struct {
	stmt *sql.Stmt
	refs int
}

// Prepare prepares q, a fence statement, on pool (a database's writer
// pool) for Run, until as many Unprepare calls. It must run outside a
// write transaction of pool, which holds the pool's one connection:
// whoever makes the statements (the erasure guard) calls it as it opens.
func Prepare(ctx context.Context, pool *sql.DB, q string) error {
	prepared.Lock()
	defer prepared.Unlock()
	k := stmtKey{pool, q}
	if p, ok := prepared.m[k]; ok {
		p.refs++
		return nil
	}
	stmt, err := pool.PrepareContext(ctx, q)
	if err != nil {
		return fmt.Errorf("write fence: %w", err)
	}
	if prepared.m == nil {
		prepared.m = map[stmtKey]*preparedStmt{}
	}
	prepared.m[k] = &preparedStmt{stmt: stmt, refs: 1}
	return nil
}

// Unprepare undoes one Prepare of q on pool.
func Unprepare(pool *sql.DB, q string) {
	prepared.Lock()
	defer prepared.Unlock()
	k := stmtKey{pool, q}
	if p, ok := prepared.m[k]; ok {
		if p.refs--; p.refs == 0 {
			_ = p.stmt.Close()
			delete(prepared.m, k)
		}
	}
}

// lookup returns q's statement prepared on pool, nil when there is none.
func lookup(pool *sql.DB, q string) *sql.Stmt {
	prepared.Lock()
	defer prepared.Unlock()
	if p, ok := prepared.m[stmtKey{pool, q}]; ok {
		return p.stmt
	}
	return nil
}

// Run runs fs in tx, a write transaction of pool holding the write lock:
// a check of their keys unless their statements fence the keys, then
// their statements (prepared, when Prepare prepared them on pool; parsed
// again otherwise, which costs about as much as the query). A write they
// refuse fails wrapping keys.ErrSubjectErased.
func Run[S ~Statement, F Fence[S]](ctx context.Context, tx *sql.Tx, pool *sql.DB, fs []F) error {
	for _, f := range fs {
		stmts, inSQL := f.Statements()
		if !inSQL {
			if err := f.Check(ctx); err != nil {
				return err
			}
		}
		for _, st := range stmts {
			var refused bool
			var row *sql.Row
			if stmt := lookup(pool, Statement(st).SQL); stmt != nil {
				row = tx.StmtContext(ctx, stmt).QueryRowContext(ctx, Statement(st).Args...)
			} else {
				row = tx.QueryRowContext(ctx, Statement(st).SQL, Statement(st).Args...)
			}
			if err := row.Scan(&refused); err != nil {
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
