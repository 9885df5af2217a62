package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/internal/pgmigrate"
)

// Options configures a Table. The zero value is usable.
type Options struct {
	// Schema holds the table; empty means the connection's search path.
	Schema string
}

// Table is an audit.Table in PostgreSQL.
type Table struct {
	pool  *pgxpool.Pool
	opts  Options
	table string
	name  pgx.Identifier // the table, for COPY
	lock  int64          // advisory lock serialising appends
}

var _ audit.Table = (*Table)(nil)

// New returns the trail table on pool; call Setup once to create it.
func New(pool *pgxpool.Pool, opts Options) (*Table, error) {
	if pool == nil {
		return nil, errors.New("audit/postgres: nil pool")
	}
	t := &Table{pool: pool, opts: opts, table: "memvault_audit", name: pgx.Identifier{"memvault_audit"}}
	if opts.Schema != "" {
		t.name = pgx.Identifier{opts.Schema, "memvault_audit"}
		t.table = t.name.Sanitize()
	}
	h := fnv.New64a()
	h.Write([]byte("memvault/audit/" + t.table))
	t.lock = int64(h.Sum64())
	return t, nil
}

// Setup creates the table when missing; it is safe to run concurrently.
func (t *Table) Setup(ctx context.Context) error {
	set := pgmigrate.Set{Table: "memvault_audit_migrations", Statements: []string{`CREATE TABLE IF NOT EXISTS ` + t.table + ` (
	seq       BIGINT PRIMARY KEY,
	at        TIMESTAMPTZ NOT NULL,
	principal TEXT NOT NULL,
	op        TEXT NOT NULL,
	target    TEXT NOT NULL,
	subject   TEXT NOT NULL,
	key_id    TEXT NOT NULL,
	mac       TEXT NOT NULL
)`}}
	if err := pgmigrate.Run(ctx, t.pool, t.opts.Schema, "memvault/audit/setup", set); err != nil {
		return fmt.Errorf("audit/postgres: setup: %w", err)
	}
	return nil
}

// Append implements audit.Table in one transaction holding an advisory
// lock, so appenders of every process take turns.
func (t *Table) Append(ctx context.Context, rs []audit.Record, mac func(string, audit.Record) string) error {
	err := pgx.BeginFunc(ctx, t.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, t.lock); err != nil {
			return err
		}
		var prev string
		var last int64
		err := tx.QueryRow(ctx, `SELECT seq, mac FROM `+t.table+` ORDER BY seq DESC LIMIT 1`).Scan(&last, &prev)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		rows := make([][]any, len(rs))
		for i, r := range rs {
			last++
			r.Seq = last
			r.MAC = mac(prev, r)
			prev = r.MAC
			rows[i] = []any{r.Seq, r.Time, r.Principal, r.Op, r.Target, r.Subject, r.KeyID, r.MAC}
		}
		_, err = tx.CopyFrom(ctx, t.name, []string{"seq", "at", "principal", "op", "target", "subject", "key_id", "mac"}, pgx.CopyFromRows(rows))
		return err
	})
	if err != nil {
		return fmt.Errorf("audit/postgres: %w", err)
	}
	return nil
}

// Page implements audit.Table.
func (t *Table) Page(ctx context.Context, after int64, limit int) ([]audit.Record, error) {
	rows, err := t.pool.Query(ctx, `SELECT seq, at, principal, op, target, subject, key_id, mac FROM `+t.table+` WHERE seq > $1 ORDER BY seq LIMIT $2`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("audit/postgres: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (audit.Record, error) {
		var a audit.Record
		err := r.Scan(&a.Seq, &a.Time, &a.Principal, &a.Op, &a.Target, &a.Subject, &a.KeyID, &a.MAC)
		a.Time = a.Time.UTC()
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("audit/postgres: %w", err)
	}
	return out, nil
}
