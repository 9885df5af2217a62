package pgdb

import (
	"context"
	"iter"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/memvault/memvault/internal/sqlexec"
)

// Ident is the name of table in schema as SQL spells it, quoted: schema
// qualified, or bare (found through the search_path) when schema is "".
func Ident(schema, table string) string {
	if schema == "" {
		return pgx.Identifier{table}.Sanitize()
	}
	return pgx.Identifier{schema, table}.Sanitize()
}

// Querier runs statements: *pgxpool.Pool, *pgxpool.Conn, *pgx.Conn and
// pgx.Tx implement it. It and DB are the one interface over pgx that
// every memvault PostgreSQL package takes.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// DB is a Querier that begins transactions (a savepoint, on a pgx.Tx).
type DB interface {
	Querier
	Begin(ctx context.Context) (pgx.Tx, error)
}

// Exec is a sqlexec.DB over pgx. Statements are rebound to "$n"
// placeholders and a transaction's statements are sent as one pipelined
// batch (inside the caller's transaction, as a savepoint, when DB is one).
type Exec struct{ DB DB }

var _ sqlexec.DB = Exec{}

// Query implements sqlexec.DB.
func (d Exec) Query(ctx context.Context, q string, args []any, row func(scan func(dest ...any) error) error) error {
	rows, err := d.DB.Query(ctx, Rebind(q), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := row(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}

// ExecTx implements sqlexec.DB.
func (d Exec) ExecTx(ctx context.Context, stmts []sqlexec.Stmt) error {
	b := &pgx.Batch{}
	for _, s := range stmts {
		b.Queue(Rebind(s.SQL), s.Args...)
	}
	return pgx.BeginFunc(ctx, d.DB, func(tx pgx.Tx) error {
		return tx.SendBatch(ctx, b).Close()
	})
}

// Rebind turns the "?" placeholders of q into PostgreSQL's "$1", "$2", …
// in order. A "?" inside a quoted literal or identifier is left alone;
// shared statements do not use PostgreSQL's "?" operators (jsonb key
// tests), which Rebind would take for placeholders.
func Rebind(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 8)
	n := 0
	var quote byte
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// SplitRows splits a two-dimensional array as pgtype.FlatArray scans it
// (row after row) into its rows of n elements, each a subslice of flat;
// false when flat does not hold whole rows. A statement returns a row's
// parts this way (array_agg(array[...])) in one column, where one row per
// part would repeat the row's other columns.
func SplitRows[T any](flat []T, n int) ([][]T, bool) {
	if n <= 0 || len(flat)%n != 0 {
		return nil, false
	}
	out := make([][]T, 0, len(flat)/n)
	for i := 0; i < len(flat); i += n {
		out = append(out, flat[i:i+n:i+n])
	}
	return out, true
}

// Seq runs sql on q and yields each row as decode makes it, as the rows
// arrive: memory stays bounded by one row whatever their number, and
// breaking out of the loop closes the query. An error (the query's, a
// row's decoding, or a late one the server sends after the last row)
// is yielded last.
func Seq[T any](ctx context.Context, q Querier, sql string, args []any, decode func(pgx.Rows) (T, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		rows, err := q.Query(ctx, sql, args...)
		if err != nil {
			yield(zero, err)
			return
		}
		defer rows.Close()
		for rows.Next() {
			v, err := decode(rows)
			if !yield(v, err) || err != nil {
				return
			}
		}
		if err := rows.Err(); err != nil {
			yield(zero, err)
		}
	}
}
