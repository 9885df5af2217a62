package sqlitekeys

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memvault/memvault/internal/idlimit"
	"github.com/memvault/memvault/internal/sqlitedb"
	"github.com/memvault/memvault/keys"
)

// migrationFiles holds the key table's schema steps, run by
// sqlitedb.Migrate as component "keys": migrations/keys/NN_*.sql is step
// NN. memvault's own tables (LangGraph has none for keys). Append new
// files; never edit a released one (schema_test.go holds them to the steps
// of earlier builds).
//
//go:embed migrations/keys/*.sql
var migrationFiles embed.FS

// migrations are the key table's schema steps, in order.
var migrations = sqlitedb.MustLoad(migrationFiles, "migrations/keys")

// Table is a keys.Table in a SQLite database.
type Table struct {
	db   *sqlitedb.DB
	path string // the file, for Purge's check; "" for a database given by New-style wrapping
}

var (
	_ keys.ThreadTable  = (*Table)(nil)
	_ keys.ErasureTable = (*Table)(nil)
	_ keys.Identified   = (*Table)(nil)
	_ keys.KEKLister    = (*Table)(nil)
)

// Open opens (creating when missing) the key table in the SQLite file at
// path.
func Open(ctx context.Context, path string) (*Table, error) {
	db, err := sqlitedb.Open(path, sqlitedb.Options{Synchronous: sqlitedb.SyncFull})
	if err != nil {
		return nil, fmt.Errorf("keys/sqlitekeys: %w", err)
	}
	if err := db.Migrate(ctx, "keys", migrations); err != nil {
		db.Close()
		return nil, fmt.Errorf("keys/sqlitekeys: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil || path == sqlitedb.Memory {
		abs = ""
	}
	return &Table{db: db, path: abs}, nil
}

// TableID implements keys.Identified: the id the first call made (a
// random 128 bits in the table's memvault_keys_meta), the same for every
// process and every later call.
func (t *Table) TableID(ctx context.Context) (string, error) {
	var id string
	err := t.db.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO memvault_keys_meta (name, value) VALUES ('table_id', lower(hex(randomblob(16))))`); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT value FROM memvault_keys_meta WHERE name = 'table_id'`).Scan(&id)
	})
	if err != nil {
		return "", fmt.Errorf("keys/sqlitekeys: table id: %w", err)
	}
	return id, nil
}

// Erasures implements keys.Identified.
func (t *Table) Erasures(ctx context.Context) (int64, error) {
	var n int64
	err := t.db.Read(ctx, func(tx *sql.Tx) error {
		// The count, or the erasures recorded when more (countedErasures).
		return tx.QueryRowContext(ctx, countedErasures).Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("keys/sqlitekeys: erasures: %w", err)
	}
	return n, nil
}

// Close closes the table's database handle.
func (t *Table) Close() error { return t.db.Close() }

const cols = `subject, version, key_id, kek, wrapped, created_at`

// countedErasures is the table's count of the erasures it started, or the
// number of erasures it records when that is more: the count starts with
// the erasures recorded before it existed (migration v5), and grows by one
// with each erasure while the records grow by one at most (an erased,
// readmitted and erased again subject keeps one record), so the records
// outnumber the count only where its row was deleted or edited.
const countedErasures = `SELECT max(
	coalesce((SELECT CAST(value AS INTEGER) FROM memvault_keys_meta WHERE name = 'erasures'), 0),
	(SELECT count(*) FROM memvault_erasures))`

// countErasure counts an erasure in the table's meta (keys.Identified).
const countErasure = `INSERT INTO memvault_keys_meta (name, value) VALUES ('erasures', '1')
	ON CONFLICT (name) DO UPDATE SET value = CAST(value AS INTEGER) + 1`

func scan(rows *sql.Rows) ([]keys.WrappedKey, error) {
	defer rows.Close()
	var out []keys.WrappedKey
	for rows.Next() {
		var k keys.WrappedKey
		var created string
		if err := rows.Scan(&k.Subject, &k.Version, &k.ID, &k.KEK, &k.Wrapped, &created); err != nil {
			return nil, fmt.Errorf("keys/sqlitekeys: %w", err)
		}
		var err error
		if k.Created, err = time.Parse(time.RFC3339Nano, created); err != nil {
			return nil, fmt.Errorf("keys/sqlitekeys: key %d of %s: bad %s", k.Version, idlimit.Name("subject", k.Subject), idlimit.Name("creation time", created))
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("keys/sqlitekeys: %w", err)
	}
	return out, nil
}

// Keys implements keys.Table.
func (t *Table) Keys(ctx context.Context, subject string) ([]keys.WrappedKey, error) {
	var out []keys.WrappedKey
	err := t.db.Read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+cols+` FROM memvault_data_keys WHERE subject = ? ORDER BY version DESC`, subject)
		if err != nil {
			return fmt.Errorf("keys/sqlitekeys: %w", err)
		}
		out, err = scan(rows)
		return err
	})
	return out, err
}

// Insert implements keys.Table.
func (t *Table) Insert(ctx context.Context, k keys.WrappedKey) error {
	return t.db.Write(ctx, func(tx *sql.Tx) error {
		if err := refuseErasing(ctx, tx, k.Subject); err != nil {
			return err
		}
		if th, ok := keys.ThreadOfKeyOwner(k.Subject); ok {
			// A thread of an erased subject gets no key again.
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM memvault_thread_subjects b JOIN memvault_erasures e ON e.subject = b.subject
WHERE b.thread_id = ? AND e.readmitted = 0`, th).Scan(&n); err != nil {
				return fmt.Errorf("keys/sqlitekeys: %w", err)
			}
			if n > 0 {
				return fmt.Errorf("keys/sqlitekeys: key of %s: %w", idlimit.Name("thread", th), keys.ErrSubjectErased)
			}
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO memvault_data_keys (`+cols+`) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			k.Subject, k.Version, k.ID, k.KEK, k.Wrapped, k.Created.UTC().Format(time.RFC3339Nano))
		if err != nil {
			return fmt.Errorf("keys/sqlitekeys: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("keys/sqlitekeys: %w", err)
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
			return fmt.Errorf("keys/sqlitekeys: %w", err)
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
	// A reader keeping the log makes this fail rather than pass silently;
	// StartErasure and Purge are the erasure's own path.
	if err := t.db.Compact(ctx); err != nil {
		return out, fmt.Errorf("keys/sqlitekeys: keys destroyed, a copy may remain in the file: %w: %w", keys.ErrErasurePending, err)
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
			return fmt.Errorf("keys/sqlitekeys: %w", err)
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
			return fmt.Errorf("keys/sqlitekeys: %w", err)
		}
		out, err = scan(rows)
		return err
	})
	return out, err
}

// KEKs implements keys.KEKLister: a loose scan of the kek index, one
// seek per distinct KEK (never a scan of every key), at most limit.
func (t *Table) KEKs(ctx context.Context, limit int) ([]string, error) {
	var out []string
	err := t.db.Read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, distinctKEKs, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				return err
			}
			out = append(out, k)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("keys/sqlitekeys: KEKs: %w", err)
	}
	return out, nil
}

// distinctKEKs walks the kek index (migration v6) from one KEK to the next
// greater one: as many seeks as distinct KEKs, up to the limit (?1).
const distinctKEKs = `WITH RECURSIVE k(kek, n) AS (
	SELECT (SELECT kek FROM memvault_data_keys ORDER BY kek LIMIT 1), 1
	UNION ALL
	SELECT (SELECT kek FROM memvault_data_keys WHERE kek > k.kek ORDER BY kek LIMIT 1), n + 1
		FROM k WHERE k.kek IS NOT NULL AND n < ?1
) SELECT kek FROM k WHERE kek IS NOT NULL`

// BindThread implements keys.ThreadTable.
func (t *Table) BindThread(ctx context.Context, thread, subject string) (string, error) {
	var bound string
	err := t.db.Write(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT subject FROM memvault_thread_subjects WHERE thread_id = ?`, thread).Scan(&bound)
		if err == nil || !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if err := refuseErasing(ctx, tx, subject); err != nil {
			return err
		}
		bound = subject
		_, err = tx.ExecContext(ctx, `INSERT INTO memvault_thread_subjects (thread_id, subject) VALUES (?, ?)`, thread, subject)
		return err
	})
	if errors.Is(err, keys.ErrSubjectErased) {
		return "", err
	}
	if err != nil {
		return "", fmt.Errorf("keys/sqlitekeys: bind thread: %w", err)
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
		return "", fmt.Errorf("keys/sqlitekeys: %w", err)
	}
	return s, nil
}

// reach is the threads an erasure of subject (?1) reaches: those bound to
// it and every thread that follows one of them, transitively (UNION, not
// UNION ALL, so that a copy made back onto its source ends the walk).
const reach = `WITH RECURSIVE reach(t) AS (
	SELECT thread_id FROM memvault_thread_subjects WHERE subject = ?1
	UNION SELECT f.thread_id FROM memvault_thread_sources f JOIN reach ON f.source = reach.t) `

// SubjectThreads implements keys.ThreadTable.
func (t *Table) SubjectThreads(ctx context.Context, subject string) ([]string, error) {
	var out []string
	err := t.db.Read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, reach+`SELECT t FROM reach ORDER BY t`, subject)
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
		return nil, fmt.Errorf("keys/sqlitekeys: %w", err)
	}
	return out, nil
}

// FollowThread implements keys.ThreadTable. SQLite runs one write
// transaction at a time, so the record and an erasure are ordered.
func (t *Table) FollowThread(ctx context.Context, thread, source string) error {
	err := t.db.Write(ctx, func(tx *sql.Tx) error {
		var erased string
		// source alone, not what it follows: an erasure binds every
		// unbound thread it reaches to its subject, so a copy of a copy
		// of an erased subject's thread is bound to it; one bound to
		// another subject lost its keys and rows to the erasure and holds
		// only what was written since. A walk up the copies would cost
		// every copy the length of its chain, under the write lock.
		err := tx.QueryRowContext(ctx, `SELECT b.subject FROM memvault_thread_subjects b
	JOIN memvault_erasures e ON e.subject = b.subject AND e.readmitted = 0 WHERE b.thread_id = ?1`, source).Scan(&erased)
		if err == nil {
			return fmt.Errorf("keys/sqlitekeys: copy of %s (%s): %w", idlimit.Name("thread", source), idlimit.Name("subject", erased), keys.ErrSubjectErased)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT OR IGNORE INTO memvault_thread_sources (thread_id, source) VALUES (?, ?)`, thread, source)
		return err
	})
	if errors.Is(err, keys.ErrSubjectErased) {
		return err
	}
	if err != nil {
		return fmt.Errorf("keys/sqlitekeys: follow thread: %w", err)
	}
	return nil
}

// UnbindThreads implements keys.ThreadTable.
func (t *Table) UnbindThreads(ctx context.Context, subject string) error {
	return t.db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM memvault_thread_subjects WHERE subject = ?`, subject)
		return err
	})
}

// refuseErasing fails with keys.ErrSubjectErased when subject was erased
// (or is being erased) and not readmitted: no key is made and no thread
// bound for it.
func refuseErasing(ctx context.Context, tx *sql.Tx, subject string) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM memvault_erasures WHERE subject = ? AND readmitted = 0`, subject).Scan(&n); err != nil {
		return fmt.Errorf("keys/sqlitekeys: %w", err)
	}
	if n > 0 {
		return fmt.Errorf("keys/sqlitekeys: %s: %w", idlimit.Name("subject", subject), keys.ErrSubjectErased)
	}
	return nil
}

const erasureCols = `subject, started_at, key_ids, trace, threads, items, done, finished_at, readmitted`

func scanErasure(row interface{ Scan(...any) error }) (*keys.Erasure, error) {
	var (
		e            keys.Erasure
		started, ids string
		finished     sql.NullString
		done, readm  int
	)
	if err := row.Scan(&e.Subject, &started, &ids, &e.Trace, &e.Threads, &e.Items, &done, &finished, &readm); err != nil {
		return nil, err
	}
	var err error
	if e.Started, err = time.Parse(time.RFC3339Nano, started); err != nil {
		return nil, fmt.Errorf("keys/sqlitekeys: erasure of %s: bad %s", idlimit.Name("subject", e.Subject), idlimit.Name("start time", started))
	}
	if finished.Valid {
		if e.Finished, err = time.Parse(time.RFC3339Nano, finished.String); err != nil {
			return nil, fmt.Errorf("keys/sqlitekeys: erasure of %s: bad %s", idlimit.Name("subject", e.Subject), idlimit.Name("finish time", finished.String))
		}
	}
	if ids != "" {
		e.KeyIDs = strings.Split(ids, ",")
	}
	e.Done, e.Readmitted = done != 0, readm != 0
	return &e, nil
}

// StartErasure implements keys.ErasureTable. The deleted rows' pages are
// zeroed (secure_delete); Purge then rewrites the file and truncates the
// log, and checks that no copy of the keys' bytes is left.
func (t *Table) StartErasure(ctx context.Context, subject string, now time.Time) (keys.Erasure, error) {
	var out keys.Erasure
	err := t.db.Write(ctx, func(tx *sql.Tx) error {
		e, err := scanErasure(tx.QueryRowContext(ctx, `SELECT `+erasureCols+` FROM memvault_erasures WHERE subject = ?`, subject))
		if errors.Is(err, sql.ErrNoRows) || (err == nil && e.Readmitted) {
			e, err = &keys.Erasure{Subject: subject, Started: now}, nil
		}
		if err != nil {
			return fmt.Errorf("keys/sqlitekeys: %w", err)
		}
		// Copies of the subject's threads not bound to anyone are bound
		// to it, as tombstones: a stale writer of one gets no key again.
		if _, err := tx.ExecContext(ctx, reach+`INSERT OR IGNORE INTO memvault_thread_subjects (thread_id, subject) SELECT t, ?1 FROM reach`, subject); err != nil {
			return fmt.Errorf("keys/sqlitekeys: %w", err)
		}
		// The subject's keys, and the own keys of every thread the
		// erasure reaches (bound to it, or following one that is).
		rows, err := tx.QueryContext(ctx, reach+`DELETE FROM memvault_data_keys WHERE subject = ?1
	OR subject IN (SELECT ?2 || t FROM reach) RETURNING `+cols,
			subject, keys.ThreadKeyOwner(""))
		if err != nil {
			return fmt.Errorf("keys/sqlitekeys: %w", err)
		}
		gone, err := scan(rows)
		if err != nil {
			return err
		}
		var ids []string
		for _, k := range gone {
			ids = append(ids, k.ID)
			e.Trace = keys.AppendFingerprints(e.Trace, keys.FingerprintOf(k.Wrapped))
			clear(k.Wrapped)
		}
		e.KeyIDs = keys.MergeKeyIDs(e.KeyIDs, ids)
		if e.Trace == nil {
			e.Trace = []byte{}
		}
		e.Done, e.Finished = false, time.Time{}
		_, err = tx.ExecContext(ctx, `INSERT OR REPLACE INTO memvault_erasures (`+erasureCols+`) VALUES (?, ?, ?, ?, ?, ?, 0, NULL, 0)`,
			subject, e.Started.UTC().Format(time.RFC3339Nano), strings.Join(e.KeyIDs, ","), e.Trace, e.Threads, e.Items)
		if err != nil {
			return fmt.Errorf("keys/sqlitekeys: record erasure: %w", err)
		}
		if _, err := tx.ExecContext(ctx, countErasure); err != nil {
			return fmt.Errorf("keys/sqlitekeys: record erasure: %w", err)
		}
		out = *e
		return nil
	})
	return out, err
}

// Erasure implements keys.ErasureTable.
func (t *Table) Erasure(ctx context.Context, subject string) (*keys.Erasure, error) {
	var out *keys.Erasure
	err := t.db.Read(ctx, func(tx *sql.Tx) error {
		e, err := scanErasure(tx.QueryRowContext(ctx, `SELECT `+erasureCols+` FROM memvault_erasures WHERE subject = ?`, subject))
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		out = e
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("keys/sqlitekeys: %w", err)
	}
	return out, nil
}

// AddErased implements keys.ErasureTable.
func (t *Table) AddErased(ctx context.Context, subject string, threads, items int) error {
	return t.db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE memvault_erasures SET threads = max(threads, ?), items = items + ? WHERE subject = ? AND done = 0`, threads, items, subject)
		return err
	})
}

// FinishErasure implements keys.ErasureTable.
func (t *Table) FinishErasure(ctx context.Context, subject string, now time.Time) error {
	return t.db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE memvault_erasures SET done = 1, finished_at = ? WHERE subject = ? AND done = 0`, now.UTC().Format(time.RFC3339Nano), subject)
		return err
	})
}

// Readmit implements keys.ErasureTable.
func (t *Table) Readmit(ctx context.Context, subject string) error {
	return t.db.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE memvault_erasures SET readmitted = 1 WHERE subject = ? AND done = 1`, subject)
		if err != nil {
			return fmt.Errorf("keys/sqlitekeys: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return keys.ErrNotErased
		}
		// The bindings of its threads were kept as tombstones until now,
		// and what they were copied from or to with them.
		if _, err := tx.ExecContext(ctx, `DELETE FROM memvault_thread_sources WHERE thread_id IN (SELECT thread_id FROM memvault_thread_subjects WHERE subject = ?1)
	OR source IN (SELECT thread_id FROM memvault_thread_subjects WHERE subject = ?1)`, subject); err != nil {
			return fmt.Errorf("keys/sqlitekeys: %w", err)
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM memvault_thread_subjects WHERE subject = ?`, subject)
		return err
	})
}

// LiveKey implements keys.ErasureTable.
func (t *Table) LiveKey(ctx context.Context, _, keyID string) (bool, error) {
	var n int
	err := t.db.Read(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT count(*) FROM memvault_data_keys WHERE key_id = ?`, keyID).Scan(&n)
	})
	if err != nil {
		return false, fmt.Errorf("keys/sqlitekeys: %w", err)
	}
	return n > 0, nil
}

// Purge implements keys.ErasureTable. It rewrites the file (VACUUM: pages
// that held the keys before B-tree rebalancing moved them keep stale cell
// images that secure_delete does not reach), checkpoints and truncates the
// write-ahead log, and reads the file and its log back looking for each
// destroyed key's bytes (keys.Fingerprint). A reader in another process
// whose transaction began before the keys were destroyed keeps the log
// from being truncated; Purge retries until opt's deadline, then reports
// the erasure pending.
func (t *Table) Purge(ctx context.Context, e keys.Erasure, opt keys.PurgeOptions) error {
	fps, err := keys.ParseFingerprints(e.Trace)
	if err != nil {
		return err
	}
	if t.path == "" {
		return nil // an in-memory database: nothing on disk
	}
	return opt.Retry(ctx, "keys/sqlitekeys", func(patience time.Duration) (string, error) {
		return t.purgeOnce(ctx, fps, patience)
	})
}

// purgeOnce compacts the file, truncates its log and checks both for the
// fingerprints; it returns why the keys are not gone yet ("" when they are).
func (t *Table) purgeOnce(ctx context.Context, fps []keys.Fingerprint, patience time.Duration) (string, error) {
	w, err := t.db.Writer().Conn(ctx)
	if err != nil {
		return "", fmt.Errorf("keys/sqlitekeys: %w", err)
	}
	defer w.Close()
	// A truncating checkpoint waits for readers through the busy handler:
	// bound it by the purge's own patience, then restore the connection's.
	var busyMS int
	if err := w.QueryRowContext(ctx, `PRAGMA busy_timeout`).Scan(&busyMS); err != nil {
		return "", fmt.Errorf("keys/sqlitekeys: %w", err)
	}
	if _, err := w.ExecContext(ctx, fmt.Sprintf(`PRAGMA busy_timeout = %d`, max(patience.Milliseconds(), 1))); err != nil {
		return "", fmt.Errorf("keys/sqlitekeys: %w", err)
	}
	defer w.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf(`PRAGMA busy_timeout = %d`, busyMS)) //nolint:errcheck // best effort; the pool's DSN sets it on new connections anyway
	if _, err := w.ExecContext(ctx, `VACUUM`); err != nil {
		return "", fmt.Errorf("keys/sqlitekeys: compact the key table: %w", err)
	}
	var busy, logFrames, done int
	if err := w.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logFrames, &done); err != nil {
		return "", fmt.Errorf("keys/sqlitekeys: checkpoint the key table's log: %w", err)
	}
	for _, f := range []string{t.path, t.path + "-wal"} {
		data, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("keys/sqlitekeys: check the key table: %w", err)
		}
		if keys.FindFingerprints(data, fps) >= 0 {
			return fmt.Sprintf("a copy of a destroyed key remains in %s", filepath.Base(f)), nil
		}
	}
	// A log a reader kept from being truncated may hold older wrappings of
	// the same keys (before a KEK rotation), which no fingerprint names.
	if busy != 0 {
		return fmt.Sprintf("a reader of %s (another process or connection) keeps its log, which may hold a copy of a destroyed key", filepath.Base(t.path)), nil
	}
	return "", nil
}

// Compact rewrites the key table's file so that it keeps no image of keys
// rewritten or deleted before, and empties its write-ahead log
// (sqlitedb.DB.Compact): a rewrapped key's old bytes otherwise stay in
// the log, and in the file until the log is checkpointed. keys.Hierarchy
// calls it when RotateKEK is done. It fails, wrapping sqlitedb.ErrWALBusy,
// while another process is inside a read transaction on the table.
func (t *Table) Compact(ctx context.Context) error {
	if err := t.db.Compact(ctx); err != nil {
		return fmt.Errorf("keys/sqlitekeys: %w", err)
	}
	return nil
}
