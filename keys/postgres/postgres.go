package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/internal/pgmigrate"
	"github.com/memvault/memvault/keys"
)

// Options configures a Table. The zero value is usable.
type Options struct {
	// Schema holds the table; empty means the connection's search path.
	Schema string
}

// Table is a keys.Table in PostgreSQL.
type Table struct {
	pool    *pgxpool.Pool
	opts    Options
	table   string // qualified name
	threads string // the thread bindings' table, qualified
}

var _ keys.ThreadTable = (*Table)(nil)

// New returns the key table on pool; call Setup once to create it.
func New(pool *pgxpool.Pool, opts Options) (*Table, error) {
	if pool == nil {
		return nil, fmt.Errorf("keys/postgres: nil pool")
	}
	t := &Table{pool: pool, opts: opts, table: "memvault_data_keys", threads: "memvault_thread_subjects"}
	if opts.Schema != "" {
		t.table = pgx.Identifier{opts.Schema, "memvault_data_keys"}.Sanitize()
		t.threads = pgx.Identifier{opts.Schema, "memvault_thread_subjects"}.Sanitize()
	}
	return t, nil
}

// Setup creates the table (and the schema) when missing; it is safe to run
// concurrently and repeatedly.
func (t *Table) Setup(ctx context.Context) error {
	set := pgmigrate.Set{Table: "memvault_keys_migrations", Statements: []string{`CREATE TABLE IF NOT EXISTS ` + t.table + ` (
	subject    TEXT        NOT NULL,
	version    INTEGER     NOT NULL,
	key_id     TEXT        NOT NULL,
	kek        TEXT        NOT NULL,
	wrapped    BYTEA       NOT NULL,
	created_at TIMESTAMPTZ NOT NULL,
	PRIMARY KEY (subject, version)
)`, `CREATE TABLE IF NOT EXISTS ` + t.threads + ` (
	thread_id TEXT PRIMARY KEY,
	subject   TEXT NOT NULL
)`, `CREATE INDEX IF NOT EXISTS memvault_thread_subjects_subject ON ` + t.threads + ` (subject)`}}
	if err := pgmigrate.Run(ctx, t.pool, t.opts.Schema, "memvault/keys/setup", set); err != nil {
		return fmt.Errorf("keys/postgres: setup: %w", err)
	}
	return nil
}

const cols = `subject, version, key_id, kek, wrapped, created_at`

func (t *Table) query(ctx context.Context, sql string, args ...any) ([]keys.WrappedKey, error) {
	rows, err := t.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("keys/postgres: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (keys.WrappedKey, error) {
		var k keys.WrappedKey
		err := r.Scan(&k.Subject, &k.Version, &k.ID, &k.KEK, &k.Wrapped, &k.Created)
		return k, err
	})
	if err != nil {
		return nil, fmt.Errorf("keys/postgres: %w", err)
	}
	return out, nil
}

// Keys implements keys.Table.
func (t *Table) Keys(ctx context.Context, subject string) ([]keys.WrappedKey, error) {
	return t.query(ctx, `SELECT `+cols+` FROM `+t.table+` WHERE subject = $1 ORDER BY version DESC`, subject)
}

// Insert implements keys.Table.
func (t *Table) Insert(ctx context.Context, k keys.WrappedKey) error {
	tag, err := t.pool.Exec(ctx, `INSERT INTO `+t.table+` (`+cols+`) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
		k.Subject, k.Version, k.ID, k.KEK, k.Wrapped, k.Created)
	if err != nil {
		return fmt.Errorf("keys/postgres: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return keys.ErrKeyExists
	}
	return nil
}

// Destroy implements keys.Table: the rows are deleted, then the table is
// vacuumed so that their tuples are removed from its pages.
func (t *Table) Destroy(ctx context.Context, subject string) ([]keys.WrappedKey, error) {
	out, err := t.query(ctx, `DELETE FROM `+t.table+` WHERE subject = $1 RETURNING `+cols, subject)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Wrapped = nil
	}
	if _, err := t.pool.Exec(ctx, `VACUUM `+t.table); err != nil {
		return out, fmt.Errorf("keys/postgres: keys destroyed, table not vacuumed: %w", err)
	}
	return out, nil
}

// Rewrap implements keys.Table.
func (t *Table) Rewrap(ctx context.Context, subject string, version int, oldKEK, newKEK string, wrapped []byte) (bool, error) {
	tag, err := t.pool.Exec(ctx, `UPDATE `+t.table+` SET kek = $1, wrapped = $2 WHERE subject = $3 AND version = $4 AND kek = $5`,
		newKEK, wrapped, subject, version, oldKEK)
	if err != nil {
		return false, fmt.Errorf("keys/postgres: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// Page implements keys.Table.
func (t *Table) Page(ctx context.Context, afterSubject string, afterVersion, limit int) ([]keys.WrappedKey, error) {
	return t.query(ctx, `SELECT `+cols+` FROM `+t.table+` WHERE (subject, version) > ($1, $2) ORDER BY subject, version LIMIT $3`,
		afterSubject, afterVersion, limit)
}

// BindThread implements keys.ThreadTable.
func (t *Table) BindThread(ctx context.Context, thread, subject string) (string, error) {
	var bound string
	err := t.pool.QueryRow(ctx, `WITH ins AS (INSERT INTO `+t.threads+` (thread_id, subject) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING subject)
SELECT subject FROM ins UNION ALL SELECT subject FROM `+t.threads+` WHERE thread_id = $1 LIMIT 1`, thread, subject).Scan(&bound)
	if errors.Is(err, pgx.ErrNoRows) {
		// A concurrent binding committed after this statement's snapshot:
		// the next statement sees it.
		err = t.pool.QueryRow(ctx, `SELECT subject FROM `+t.threads+` WHERE thread_id = $1`, thread).Scan(&bound)
	}
	if err != nil {
		return "", fmt.Errorf("keys/postgres: bind thread: %w", err)
	}
	return bound, nil
}

// BoundSubject implements keys.ThreadTable.
func (t *Table) BoundSubject(ctx context.Context, thread string) (string, error) {
	var s string
	err := t.pool.QueryRow(ctx, `SELECT subject FROM `+t.threads+` WHERE thread_id = $1`, thread).Scan(&s)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("keys/postgres: %w", err)
	}
	return s, nil
}

// SubjectThreads implements keys.ThreadTable.
func (t *Table) SubjectThreads(ctx context.Context, subject string) ([]string, error) {
	rows, err := t.pool.Query(ctx, `SELECT thread_id FROM `+t.threads+` WHERE subject = $1 ORDER BY thread_id`, subject)
	if err != nil {
		return nil, fmt.Errorf("keys/postgres: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("keys/postgres: %w", err)
	}
	return out, nil
}

// UnbindThreads implements keys.ThreadTable.
func (t *Table) UnbindThreads(ctx context.Context, subject string) error {
	if _, err := t.pool.Exec(ctx, `DELETE FROM `+t.threads+` WHERE subject = $1`, subject); err != nil {
		return fmt.Errorf("keys/postgres: %w", err)
	}
	return nil
}
