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

// Tx is a transaction begun by Begin: a *sql.Tx that its holder ends with
// exactly one Commit or Rollback. A write transaction holds the process's
// writer semaphore and the database's write lock from Begin to its end.
type Tx struct {
	*sql.Tx
	s        *shared // nil once ended
	write    bool
	onCommit []func()
}

// Begin starts a write transaction (write true) or a read transaction.
// Write transactions of a process run one at a time: Begin waits (or
// fails with ctx's error) while another is open; the transaction holds
// the database's write lock from its start, so it cannot fail with
// SQLITE_BUSY half-way. A read transaction sees one snapshot of the
// database. The holder must not begin another transaction of d before
// ending this one.
func (d *DB) Begin(ctx context.Context, write bool) (*Tx, error) {
	s, err := d.get()
	if err != nil {
		return nil, err
	}
	if !write {
		tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return nil, fmt.Errorf("sqlitedb: begin: %w", err)
		}
		return &Tx{Tx: tx, s: s}, nil
	}
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		<-s.sem
		return nil, fmt.Errorf("sqlitedb: begin: %w", err)
	}
	if !s.immediate {
		if _, err := tx.ExecContext(ctx, lockStmt); err != nil {
			_ = tx.Rollback()
			<-s.sem
			return nil, fmt.Errorf("sqlitedb: begin: %w", err)
		}
	}
	return &Tx{Tx: tx, s: s, write: true}, nil
}

// OnCommit registers fn to run after the write transaction commits, before
// the next write transaction of the process can begin: callers keep
// in-process state (caches) in commit order. fn never runs when the
// transaction rolls back or its commit fails.
func (t *Tx) OnCommit(fn func()) { t.onCommit = append(t.onCommit, fn) }

// Commit commits the transaction (ends a read transaction), runs the
// OnCommit hooks of a write transaction that committed, and releases the
// writer semaphore. Ending a transaction twice fails with sql.ErrTxDone.
func (t *Tx) Commit() error {
	s := t.s
	if s == nil {
		return sql.ErrTxDone
	}
	t.s = nil
	if !t.write {
		// A read transaction has nothing to commit; Rollback ends it.
		if err := t.Tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
			return fmt.Errorf("sqlitedb: end read: %w", err)
		}
		return nil
	}
	defer func() { <-s.sem }()
	if err := t.Tx.Commit(); err != nil {
		return fmt.Errorf("sqlitedb: commit: %w", err)
	}
	for _, fn := range t.onCommit {
		fn()
	}
	return nil
}

// Rollback ends the transaction without its changes and releases the
// writer semaphore. After Commit (or a second Rollback) it does nothing.
func (t *Tx) Rollback() error {
	s := t.s
	if s == nil {
		return nil
	}
	t.s, t.onCommit = nil, nil
	err := t.Tx.Rollback()
	if t.write {
		<-s.sem
	}
	if err != nil && !errors.Is(err, sql.ErrTxDone) {
		return fmt.Errorf("sqlitedb: rollback: %w", err)
	}
	return nil
}

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
	tx, err := d.Begin(ctx, true)
	if err != nil {
		return err
	}
	if err := fn(tx.Tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if committed != nil {
		tx.OnCommit(committed)
	}
	return tx.Commit()
}

// Read runs fn in a read transaction, so that its queries see one snapshot
// of the database. fn must not call Read or Write.
func (d *DB) Read(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := d.Begin(ctx, false)
	if err != nil {
		return err
	}
	err = fn(tx.Tx)
	if cerr := tx.Commit(); cerr != nil && err == nil {
		err = cerr
	}
	return err
}
