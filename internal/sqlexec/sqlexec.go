package sqlexec

import (
	"context"
	"database/sql"
)

// Stmt is one statement and its arguments, with "?" placeholders.
type Stmt struct {
	SQL  string
	Args []any
}

// DB runs shared statements on one database.
type DB interface {
	// Query runs q and calls row for each result row, with a function that
	// scans the row's columns; an error from row stops the query and is
	// returned.
	Query(ctx context.Context, q string, args []any, row func(scan func(dest ...any) error) error) error
	// ExecTx runs stmts in order in one transaction: all or none.
	ExecTx(ctx context.Context, stmts []Stmt) error
}

// SQLite is a DB over database/sql: queries run on read, statements in a
// transaction that write opens (SQLite's single writer).
type SQLite struct {
	Read  *sql.DB
	Write func(ctx context.Context, fn func(tx *sql.Tx) error) error
	// CompactFile, when set, rewrites the database file so that it keeps
	// no image of rows changed or deleted before (sqlitedb.DB.Compact).
	CompactFile func(ctx context.Context) error
}

// Compacter is a DB whose file keeps images of rewritten rows until it is
// compacted: SQLite. Re-encryption compacts it when done.
type Compacter interface {
	Compact(ctx context.Context) error
}

// Compact implements Compacter with CompactFile (nothing when it is not
// set).
func (d SQLite) Compact(ctx context.Context) error {
	if d.CompactFile == nil {
		return nil
	}
	return d.CompactFile(ctx)
}

// Query implements DB.
func (d SQLite) Query(ctx context.Context, q string, args []any, row func(scan func(dest ...any) error) error) error {
	rows, err := d.Read.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	return each(rows, row)
}

// each calls row for every row of rows.
func each(rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}, row func(scan func(dest ...any) error) error) error {
	for rows.Next() {
		if err := row(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}

// ExecTx implements DB.
func (d SQLite) ExecTx(ctx context.Context, stmts []Stmt) error {
	return d.Write(ctx, func(tx *sql.Tx) error {
		for _, s := range stmts {
			if _, err := tx.ExecContext(ctx, s.SQL, s.Args...); err != nil {
				return err
			}
		}
		return nil
	})
}
