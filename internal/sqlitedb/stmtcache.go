package sqlitedb

import (
	"context"
	"database/sql"
	"sync"
)

// StmtCache holds statements prepared on one pool, by their SQL text,
// for statements whose text is known only at run time (an audit record's
// INSERT, whose table the trail names). Prepare runs before the write
// transaction that first needs a statement: preparing in it would wait
// for the writer pool's one connection, which the transaction holds.
// The zero value is ready to use.
type StmtCache struct {
	m sync.Map // SQL text → *sql.Stmt
}

// Prepare prepares q on pool unless it is already. A failure is left to
// Exec, which then runs q unprepared and reports what is wrong with it.
func (c *StmtCache) Prepare(ctx context.Context, pool *sql.DB, q string) {
	if _, ok := c.m.Load(q); ok {
		return
	}
	s, err := pool.PrepareContext(ctx, q)
	if err != nil {
		return
	}
	if _, loaded := c.m.LoadOrStore(q, s); loaded {
		s.Close()
	}
}

// Exec runs q in tx with args, as its prepared statement when Prepare
// made one (the transaction's connection reuses its compiled copy).
func (c *StmtCache) Exec(ctx context.Context, tx *sql.Tx, q string, args ...any) (sql.Result, error) {
	if s, ok := c.m.Load(q); ok {
		return tx.StmtContext(ctx, s.(*sql.Stmt)).ExecContext(ctx, args...)
	}
	return tx.ExecContext(ctx, q, args...)
}

// Close closes every statement the cache holds.
func (c *StmtCache) Close() {
	c.m.Range(func(q, s any) bool {
		s.(*sql.Stmt).Close()
		c.m.Delete(q)
		return true
	})
}
