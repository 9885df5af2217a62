package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/memvault/memvault/internal/sqlitedb"
	"github.com/memvault/memvault/keys"
)

var migrations = []string{`CREATE TABLE IF NOT EXISTS memvault_data_keys (
	subject    TEXT    NOT NULL,
	version    INTEGER NOT NULL,
	key_id     TEXT    NOT NULL,
	kek        TEXT    NOT NULL,
	wrapped    BLOB    NOT NULL,
	created_at TEXT    NOT NULL,
	PRIMARY KEY (subject, version)
) WITHOUT ROWID`,
	`CREATE TABLE IF NOT EXISTS memvault_thread_subjects (
	thread_id TEXT PRIMARY KEY,
	subject   TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS memvault_thread_subjects_subject ON memvault_thread_subjects (subject)`}

// Table is a keys.Table in a SQLite database.
type Table struct{ db *sqlitedb.DB }

var _ keys.ThreadTable = (*Table)(nil)

// Open opens (creating when missing) the key table in the SQLite file at
// path.
func Open(ctx context.Context, path string) (*Table, error) {
	db, err := sqlitedb.Open(path, sqlitedb.Options{Synchronous: sqlitedb.SyncFull})
	if err != nil {
		return nil, fmt.Errorf("keys/sqlite: %w", err)
	}
	if err := db.Migrate(ctx, "keys", migrations); err != nil {
		db.Close()
		return nil, fmt.Errorf("keys/sqlite: %w", err)
	}
	return &Table{db: db}, nil
}

// Close closes the table's database handle.
func (t *Table) Close() error { return t.db.Close() }

const cols = `subject, version, key_id, kek, wrapped, created_at`

func scan(rows *sql.Rows) ([]keys.WrappedKey, error) {
	defer rows.Close()
	var out []keys.WrappedKey
	for rows.Next() {
		var k keys.WrappedKey
		var created string
		if err := rows.Scan(&k.Subject, &k.Version, &k.ID, &k.KEK, &k.Wrapped, &created); err != nil {
			return nil, fmt.Errorf("keys/sqlite: %w", err)
		}
		var err error
		if k.Created, err = time.Parse(time.RFC3339Nano, created); err != nil {
			return nil, fmt.Errorf("keys/sqlite: key %d of %q: bad creation time: %w", k.Version, k.Subject, err)
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("keys/sqlite: %w", err)
	}
	return out, nil
}

// Keys implements keys.Table.
func (t *Table) Keys(ctx context.Context, subject string) ([]keys.WrappedKey, error) {
	var out []keys.WrappedKey
	err := t.db.Read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+cols+` FROM memvault_data_keys WHERE subject = ? ORDER BY version DESC`, subject)
		if err != nil {
			return fmt.Errorf("keys/sqlite: %w", err)
		}
		out, err = scan(rows)
		return err
	})
	return out, err
}

// Insert implements keys.Table.
func (t *Table) Insert(ctx context.Context, k keys.WrappedKey) error {
	return t.db.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO memvault_data_keys (`+cols+`) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			k.Subject, k.Version, k.ID, k.KEK, k.Wrapped, k.Created.UTC().Format(time.RFC3339Nano))
		if err != nil {
			return fmt.Errorf("keys/sqlite: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("keys/sqlite: %w", err)
		} else if n == 0 {
			return keys.ErrKeyExists
		}
		return nil
	})
}

// Destroy implements keys.Table: the rows are deleted (their pages
// zeroed), then the write-ahead log is checkpointed and truncated so no
// old copy of them stays in it. A reader holding the log open can delay
// the truncation; the next Destroy retries it.
func (t *Table) Destroy(ctx context.Context, subject string) ([]keys.WrappedKey, error) {
	var out []keys.WrappedKey
	err := t.db.Write(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `DELETE FROM memvault_data_keys WHERE subject = ? RETURNING `+cols, subject)
		if err != nil {
			return fmt.Errorf("keys/sqlite: %w", err)
		}
		out, err = scan(rows)
		return err
	})
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Wrapped = nil
	}
	if _, err := t.db.Writer().ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil && !errors.Is(err, context.Canceled) {
		return out, fmt.Errorf("keys/sqlite: keys destroyed, log not truncated: %w", err)
	}
	return out, nil
}

// Rewrap implements keys.Table.
func (t *Table) Rewrap(ctx context.Context, subject string, version int, oldKEK, newKEK string, wrapped []byte) (bool, error) {
	var n int64
	err := t.db.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE memvault_data_keys SET kek = ?, wrapped = ? WHERE subject = ? AND version = ? AND kek = ?`,
			newKEK, wrapped, subject, version, oldKEK)
		if err != nil {
			return fmt.Errorf("keys/sqlite: %w", err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return n == 1, err
}

// Page implements keys.Table.
func (t *Table) Page(ctx context.Context, afterSubject string, afterVersion, limit int) ([]keys.WrappedKey, error) {
	var out []keys.WrappedKey
	err := t.db.Read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+cols+` FROM memvault_data_keys WHERE (subject, version) > (?, ?) ORDER BY subject, version LIMIT ?`,
			afterSubject, afterVersion, limit)
		if err != nil {
			return fmt.Errorf("keys/sqlite: %w", err)
		}
		out, err = scan(rows)
		return err
	})
	return out, err
}

// BindThread implements keys.ThreadTable.
func (t *Table) BindThread(ctx context.Context, thread, subject string) (string, error) {
	var bound string
	err := t.db.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO memvault_thread_subjects (thread_id, subject) VALUES (?, ?) ON CONFLICT DO NOTHING`, thread, subject); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT subject FROM memvault_thread_subjects WHERE thread_id = ?`, thread).Scan(&bound)
	})
	if err != nil {
		return "", fmt.Errorf("keys/sqlite: bind thread: %w", err)
	}
	return bound, nil
}

// BoundSubject implements keys.ThreadTable.
func (t *Table) BoundSubject(ctx context.Context, thread string) (string, error) {
	var s string
	err := t.db.Read(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT subject FROM memvault_thread_subjects WHERE thread_id = ?`, thread).Scan(&s)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("keys/sqlite: %w", err)
	}
	return s, nil
}

// SubjectThreads implements keys.ThreadTable.
func (t *Table) SubjectThreads(ctx context.Context, subject string) ([]string, error) {
	var out []string
	err := t.db.Read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT thread_id FROM memvault_thread_subjects WHERE subject = ? ORDER BY thread_id`, subject)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var th string
			if err := rows.Scan(&th); err != nil {
				return err
			}
			out = append(out, th)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("keys/sqlite: %w", err)
	}
	return out, nil
}

// UnbindThreads implements keys.ThreadTable.
func (t *Table) UnbindThreads(ctx context.Context, subject string) error {
	return t.db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM memvault_thread_subjects WHERE subject = ?`, subject)
		return err
	})
}

// Compact rewrites the key table's file so that it keeps no image of keys
// rewritten or deleted before, and empties its write-ahead log
// (sqlitedb.DB.Compact): a rewrapped key's old bytes otherwise stay in
// the log, and in the file until the log is checkpointed. keys.Hierarchy
// calls it when RotateKEK is done. It fails, wrapping sqlitedb.ErrWALBusy,
// while another process is inside a read transaction on the table.
func (t *Table) Compact(ctx context.Context) error {
	if err := t.db.Compact(ctx); err != nil {
		return fmt.Errorf("keys/sqlite: %w", err)
	}
	return nil
}
