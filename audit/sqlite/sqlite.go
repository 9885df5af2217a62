package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/internal/sqlitedb"
)

var migrations = []string{`CREATE TABLE IF NOT EXISTS memvault_audit (
	seq       INTEGER PRIMARY KEY,
	at        TEXT NOT NULL,
	principal TEXT NOT NULL,
	op        TEXT NOT NULL,
	target    TEXT NOT NULL,
	subject   TEXT NOT NULL,
	key_id    TEXT NOT NULL,
	mac       TEXT NOT NULL
)`}

// Table is an audit.Table in a SQLite database.
type Table struct{ db *sqlitedb.DB }

var _ audit.Table = (*Table)(nil)

// Open opens (creating when missing) the trail in the SQLite file at path.
func Open(ctx context.Context, path string) (*Table, error) {
	db, err := sqlitedb.Open(path, sqlitedb.Options{})
	if err != nil {
		return nil, fmt.Errorf("audit/sqlite: %w", err)
	}
	if err := db.Migrate(ctx, "audit", migrations); err != nil {
		db.Close()
		return nil, fmt.Errorf("audit/sqlite: %w", err)
	}
	return &Table{db: db}, nil
}

// Close closes the table's database handle.
func (t *Table) Close() error { return t.db.Close() }

// Append implements audit.Table in one write transaction (SQLite runs one
// at a time, across processes too).
func (t *Table) Append(ctx context.Context, rs []audit.Record, mac func(string, audit.Record) string) error {
	err := t.db.Write(ctx, func(tx *sql.Tx) error {
		var prev string
		var last int64
		err := tx.QueryRowContext(ctx, `SELECT seq, mac FROM memvault_audit ORDER BY seq DESC LIMIT 1`).Scan(&last, &prev)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO memvault_audit (seq, at, principal, op, target, subject, key_id, mac) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, r := range rs {
			last++
			r.Seq = last
			r.MAC = mac(prev, r)
			prev = r.MAC
			if _, err := stmt.ExecContext(ctx, r.Seq, r.Time.UTC().Format(time.RFC3339Nano), r.Principal, r.Op, r.Target, r.Subject, r.KeyID, r.MAC); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("audit/sqlite: %w", err)
	}
	return nil
}

// Page implements audit.Table.
func (t *Table) Page(ctx context.Context, after int64, limit int) ([]audit.Record, error) {
	var out []audit.Record
	err := t.db.Read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT seq, at, principal, op, target, subject, key_id, mac FROM memvault_audit WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r audit.Record
			var at string
			if err := rows.Scan(&r.Seq, &at, &r.Principal, &r.Op, &r.Target, &r.Subject, &r.KeyID, &r.MAC); err != nil {
				return err
			}
			if r.Time, err = time.Parse(time.RFC3339Nano, at); err != nil {
				return fmt.Errorf("record %d: bad time %q", r.Seq, at)
			}
			out = append(out, r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("audit/sqlite: %w", err)
	}
	return out, nil
}
