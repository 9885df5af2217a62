package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver of the raw baselines
)

// sqliteDriver is the database/sql driver name of modernc.org/sqlite.
const sqliteDriver = "sqlite"

// sqlitePools is the raw baselines' connection to a SQLite file: a writer
// pool of one connection whose transactions BEGIN IMMEDIATE and a pool of
// read-only connections, with the pragmas memvault's SQLite drivers use
// (WAL, synchronous NORMAL, secure_delete: see internal/sqlitedb in the
// library module, which the CLI's module may not import), and no memory
// map, as a vault opens its file (sqlitesaver.Options.NoMmap; the bench's
// savers do too). Keep the two in step, so the baselines measure the same
// SQLite.
type sqlitePools struct {
	w, r *sql.DB
}

// openSQLitePools opens path, creating the file if needed.
func openSQLitePools(ctx context.Context, path string) (*sqlitePools, error) {
	base := path + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)" +
		"&_pragma=synchronous(NORMAL)&_pragma=mmap_size(0)&_pragma=temp_store(MEMORY)&_pragma=secure_delete(1)"
	w, err := sql.Open(sqliteDriver, base+"&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	r, err := sql.Open(sqliteDriver, base+"&_pragma=query_only(1)")
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	r.SetConnMaxIdleTime(5 * time.Minute)
	return &sqlitePools{w: w, r: r}, nil
}

// Reader is the pool of read-only connections.
func (p *sqlitePools) Reader() *sql.DB { return p.r }

// Writer is the pool of the one writer connection.
func (p *sqlitePools) Writer() *sql.DB { return p.w }

// Write runs fn in a write transaction (holding the write lock from its
// start) and commits it when fn returns nil.
func (p *sqlitePools) Write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := p.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// Read runs fn in a read transaction: its queries see one snapshot.
func (p *sqlitePools) Read(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := p.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	err = fn(tx)
	if rerr := tx.Rollback(); rerr != nil && err == nil && !errors.Is(rerr, sql.ErrTxDone) {
		err = fmt.Errorf("end read: %w", rerr)
	}
	return err
}

// Close closes both pools.
func (p *sqlitePools) Close() error { return errors.Join(p.r.Close(), p.w.Close()) }
