package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// lockStmt makes a transaction of a wrapped database take the write lock
// at once: any data-changing statement starts a write transaction, even one
// that changes nothing.
const lockStmt = `DELETE FROM memvault_migrations WHERE 0`

// Write runs fn in a write transaction and commits it when fn returns nil
// (rolls it back otherwise). Write transactions of a process run one at a
// time; the transaction holds the database's write lock from its start, so
// it cannot fail with SQLITE_BUSY half-way. fn must not call Read or Write.
func (d *DB) Write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return d.WriteCommitted(ctx, fn, nil)
}

// WriteCommitted is Write that calls committed, when not nil, after a
// successful commit and before the next write transaction of the process
// can start: callers keep in-process state (caches) in commit order.
func (d *DB) WriteCommitted(ctx context.Context, fn func(tx *sql.Tx) error, committed func()) error {
	s, err := d.get()
	if err != nil {
		return err
	}
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.sem }()

	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlitedb: begin: %w", err)
	}
	if !s.immediate {
		if _, err := tx.ExecContext(ctx, lockStmt); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("sqlitedb: begin: %w", err)
		}
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlitedb: commit: %w", err)
	}
	if committed != nil {
		committed()
	}
	return nil
}

// Read runs fn in a read transaction, so that its queries see one snapshot
// of the database. fn must not call Read or Write.
func (d *DB) Read(ctx context.Context, fn func(tx *sql.Tx) error) error {
	s, err := d.get()
	if err != nil {
		return err
	}
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("sqlitedb: begin: %w", err)
	}
	err = fn(tx)
	// A read transaction has nothing to commit; Rollback ends it.
	if rerr := tx.Rollback(); rerr != nil && err == nil && !errors.Is(rerr, sql.ErrTxDone) {
		err = fmt.Errorf("sqlitedb: end read: %w", rerr)
	}
	return err
}
