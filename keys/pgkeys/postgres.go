package pgkeys

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/internal/idlimit"
	"github.com/memvault/memvault/internal/pgmigrate"
	"github.com/memvault/memvault/keys"
)

// Options configures a Table. The zero value is usable.
type Options struct {
	// Schema holds the table; empty means the connection's search path.
	Schema string
	// ApartFromData says the data (checkpoints, store items) lives in
	// another database than the table. Writers in the data's database then
	// cannot hold a key's row in their own transaction (FenceSQL returns
	// ""), and check the key inside their transaction instead; an erasure
	// waits for the data database's older transactions to end.
	ApartFromData bool
}

// Table is a keys.Table in PostgreSQL.
type Table struct {
	pool     *pgxpool.Pool
	opts     Options
	table    string // qualified name
	threads  string // the thread bindings' table, qualified
	sources  string // what each copy of a thread was copied from, qualified
	erasures string // the erasure records' table, qualified
	fence    string // the fence function, qualified
	meta     string // the table's own facts (its id), qualified
}

var (
	_ keys.ThreadTable  = (*Table)(nil)
	_ keys.ErasureTable = (*Table)(nil)
	_ keys.SQLFencer    = (*Table)(nil)
	_ keys.Identified   = (*Table)(nil)
	_ keys.KEKLister    = (*Table)(nil)
)

// New returns the key table on pool; call Setup once to create it.
func New(pool *pgxpool.Pool, opts Options) (*Table, error) {
	if pool == nil {
		return nil, fmt.Errorf("keys/pgkeys: nil pool")
	}
	t := &Table{pool: pool, opts: opts, table: "memvault_data_keys", threads: "memvault_thread_subjects",
		sources: "memvault_thread_sources", erasures: "memvault_erasures", fence: "memvault_key_fence", meta: "memvault_keys_meta"}
	if opts.Schema != "" {
		t.table = pgx.Identifier{opts.Schema, "memvault_data_keys"}.Sanitize()
		t.threads = pgx.Identifier{opts.Schema, "memvault_thread_subjects"}.Sanitize()
		t.sources = pgx.Identifier{opts.Schema, "memvault_thread_sources"}.Sanitize()
		t.erasures = pgx.Identifier{opts.Schema, "memvault_erasures"}.Sanitize()
		t.fence = pgx.Identifier{opts.Schema, "memvault_key_fence"}.Sanitize()
		t.meta = pgx.Identifier{opts.Schema, "memvault_keys_meta"}.Sanitize()
	}
	return t, nil
}

// migrationFiles holds the key table's DDL, one statement per file, run by
// internal/pgmigrate and tracked in memvault_keys_migrations (memvault's
// own tables; LangGraph has none for keys): migrations/keys/NN_*.sql is
// recorded as v = NN. {data_keys}, {thread_subjects}, {thread_sources}, {erasures} and
// {fence} are the qualified names, {fence_sqlstate} keys.FenceSQLState.
// 03 is one row per erased subject, written in the transaction that
// destroys the keys; its trace is that transaction's id (xid8), which Purge
// waits for every snapshot to pass. 04 is the write fence
// (keys.SQLFencer): a write holds its sealing key's row FOR SHARE until it
// commits, so StartErasure's DELETE waits for it, and a write after the
// DELETE finds no row and fails. 05 lets writes check and hold their
// sealing key by id. Append new files; never edit a released one.
//
//go:embed migrations/keys/*.sql
var migrationFiles embed.FS

// migrationSet is the key table's migrations with t's names filled in.
func (t *Table) migrationSet() (pgmigrate.Set, error) {
	stmts, err := pgmigrate.Load(migrationFiles, "migrations/keys", map[string]string{
		"data_keys":       t.table,
		"thread_subjects": t.threads,
		"thread_sources":  t.sources,
		"erasures":        t.erasures,
		"fence":           t.fence,
		"fence_sqlstate":  keys.FenceSQLState,
		"meta":            t.meta,
	})
	return pgmigrate.Set{Table: "memvault_keys_migrations", Statements: stmts}, err
}

// Setup creates the table (and the schema) when missing; it is safe to run
// concurrently and repeatedly. It holds memvault's one setup advisory lock
// (internal/pgmigrate) on a connection of the pool, and returns without
// waiting for it when the table is already set up.
func (t *Table) Setup(ctx context.Context) error {
	return t.setup(ctx, t.pool)
}

// SetupTx is Setup inside tx, a transaction the caller began on the
// table's database and commits or rolls back: the tables, the fence
// function and their migration records are created with the caller's other
// writes, or not at all. It holds the setup lock until tx ends (a
// transaction-scoped advisory lock), so concurrent setups wait for the
// caller's commit or rollback.
func (t *Table) SetupTx(ctx context.Context, tx pgx.Tx) error {
	if tx == nil {
		return fmt.Errorf("keys/pgkeys: setup: %w", ErrNilTx)
	}
	return t.setup(ctx, tx)
}

// ErrNilTx is returned by SetupTx without a transaction.
var ErrNilTx = errors.New("keys/pgkeys: nil transaction")

func (t *Table) setup(ctx context.Context, db any) error {
	set, err := t.migrationSet()
	if err != nil {
		return fmt.Errorf("keys/pgkeys: setup: %w", err)
	}
	if err := pgmigrate.Run(ctx, db, t.opts.Schema, set); err != nil {
		return fmt.Errorf("keys/pgkeys: setup: %w", err)
	}
	return nil
}

// TableID implements keys.Identified: the id the first call made (a
// random 128 bits in the schema's memvault_keys_meta), the same for every
// process and every later call.
func (t *Table) TableID(ctx context.Context) (string, error) {
	var id string
	err := t.pool.QueryRow(ctx, `WITH made AS (
	INSERT INTO `+t.meta+` (name, value) VALUES ('table_id', replace(gen_random_uuid()::text, '-', ''))
	ON CONFLICT (name) DO NOTHING RETURNING value)
SELECT value FROM made UNION ALL SELECT value FROM `+t.meta+` WHERE name = 'table_id'`).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		// Another process inserted it while this statement ran (its
		// snapshot predates that row): it is there now.
		err = t.pool.QueryRow(ctx, `SELECT value FROM `+t.meta+` WHERE name = 'table_id'`).Scan(&id)
	}
	if err != nil {
		return "", fmt.Errorf("keys/pgkeys: table id: %w", err)
	}
	return id, nil
}

// Erasures implements keys.Identified.
func (t *Table) Erasures(ctx context.Context) (int64, error) {
	var n int64
	// The count, or the erasures recorded when more: as sqlitekeys'
	// countedErasures (the count starts with the records, migration v7).
	err := t.pool.QueryRow(ctx, `SELECT greatest(
	coalesce((SELECT value::bigint FROM `+t.meta+` WHERE name = 'erasures'), 0),
	(SELECT count(*) FROM `+t.erasures+`))`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("keys/pgkeys: erasures: %w", err)
	}
	return n, nil
}

const cols = `subject, version, key_id, kek, wrapped, created_at`

func (t *Table) query(ctx context.Context, sql string, args ...any) ([]keys.WrappedKey, error) {
	rows, err := t.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("keys/pgkeys: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (keys.WrappedKey, error) {
		var k keys.WrappedKey
		err := r.Scan(&k.Subject, &k.Version, &k.ID, &k.KEK, &k.Wrapped, &k.Created)
		return k, err
	})
	if err != nil {
		return nil, fmt.Errorf("keys/pgkeys: %w", err)
	}
	return out, nil
}

// Keys implements keys.Table.
func (t *Table) Keys(ctx context.Context, subject string) ([]keys.WrappedKey, error) {
	return t.query(ctx, `SELECT `+cols+` FROM `+t.table+` WHERE subject = $1 ORDER BY version DESC`, subject)
}

// Insert implements keys.Table.
func (t *Table) Insert(ctx context.Context, k keys.WrappedKey) error {
	return pgx.BeginFunc(ctx, t.pool, func(tx pgx.Tx) error {
		if err := t.lockSubject(ctx, tx, k.Subject); err != nil {
			return err
		}
		if err := t.refuseErasing(ctx, tx, k.Subject); err != nil {
			return err
		}
		if th, ok := keys.ThreadOfKeyOwner(k.Subject); ok {
			// A thread of an erased subject gets no key again; its
			// subject's lock orders this against an erasure that starts.
			var bound string
			err := tx.QueryRow(ctx, `SELECT subject FROM `+t.threads+` WHERE thread_id = $1`, th).Scan(&bound)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("keys/pgkeys: %w", err)
			}
			if bound != "" {
				if err := t.lockSubject(ctx, tx, bound); err != nil {
					return err
				}
			}
			var erased bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+t.threads+` b JOIN `+t.erasures+` e ON e.subject = b.subject
WHERE b.thread_id = $1 AND NOT e.readmitted)`, th).Scan(&erased); err != nil {
				return fmt.Errorf("keys/pgkeys: %w", err)
			}
			if erased {
				return fmt.Errorf("keys/pgkeys: key of %s: %w", idlimit.Name("thread", th), keys.ErrSubjectErased)
			}
		}
		tag, err := tx.Exec(ctx, `INSERT INTO `+t.table+` (`+cols+`) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
			k.Subject, k.Version, k.ID, k.KEK, k.Wrapped, k.Created)
		if err != nil {
			return fmt.Errorf("keys/pgkeys: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return keys.ErrKeyExists
		}
		return nil
	})
}

// lockSubject serializes, per subject, key creation, thread binding and
// the start of an erasure (a transaction-scoped advisory lock), so that no
// key or binding slips in beside an erasure that is being recorded.
//
// Every lock the transaction waits for from then on (this one, a key row a
// write holds FOR SHARE) gives up after lockWait: a caller's transaction
// that holds a key's row and then needs this lock (binding a thread inside
// the transaction that wrote it, while an erasure of the same subject
// waits for that row) would otherwise wait through the application
// forever, where PostgreSQL cannot see the cycle.
func (t *Table) lockSubject(ctx context.Context, tx pgx.Tx, subject string) error {
	if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '`+lockWait+`'`); err != nil {
		return fmt.Errorf("keys/pgkeys: %w", err)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 7253))`, t.erasures+"/"+subject); err != nil {
		return lockErr(err)
	}
	return nil
}

// lockWait bounds the key table's lock waits (see lockSubject).
const lockWait = "10s"

// lockErr says what a lock wait that gave up means.
func lockErr(err error) error {
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && pgErr.Code == "55P03" {
		return fmt.Errorf("keys/pgkeys: the subject's keys stayed locked for %s by another transaction (an open write of the subject, or an erasure); try again: %w", lockWait, err)
	}
	return fmt.Errorf("keys/pgkeys: %w", err)
}

// refuseErasing fails with keys.ErrSubjectErased when subject was erased
// (or is being erased) and not readmitted.
func (t *Table) refuseErasing(ctx context.Context, tx pgx.Tx, subject string) error {
	var erased bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+t.erasures+` WHERE subject = $1 AND NOT readmitted)`, subject).Scan(&erased); err != nil {
		return fmt.Errorf("keys/pgkeys: %w", err)
	}
	if erased {
		return fmt.Errorf("keys/pgkeys: %s: %w", idlimit.Name("subject", subject), keys.ErrSubjectErased)
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
		return out, fmt.Errorf("keys/pgkeys: keys destroyed, table not vacuumed: %w", err)
	}
	return out, nil
}

// Rewrap implements keys.Table.
func (t *Table) Rewrap(ctx context.Context, subject string, version int, oldKEK, newKEK string, wrapped []byte) (bool, error) {
	tag, err := t.pool.Exec(ctx, `UPDATE `+t.table+` SET kek = $1, wrapped = $2 WHERE subject = $3 AND version = $4 AND kek = $5`,
		newKEK, wrapped, subject, version, oldKEK)
	if err != nil {
		return false, fmt.Errorf("keys/pgkeys: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// Page implements keys.Table.
func (t *Table) Page(ctx context.Context, afterSubject string, afterVersion, limit int) ([]keys.WrappedKey, error) {
	return t.query(ctx, `SELECT `+cols+` FROM `+t.table+` WHERE (subject, version) > ($1, $2) ORDER BY subject, version LIMIT $3`,
		afterSubject, afterVersion, limit)
}

// KEKs implements keys.KEKLister: a loose scan of the kek index
// (migration 08), one index seek per distinct KEK (never a scan of every
// key), at most limit.
func (t *Table) KEKs(ctx context.Context, limit int) ([]string, error) {
	rows, err := t.pool.Query(ctx, `WITH RECURSIVE k(kek, n) AS (
	SELECT (SELECT kek FROM `+t.table+` ORDER BY kek LIMIT 1), 1
	UNION ALL
	SELECT (SELECT kek FROM `+t.table+` WHERE kek > k.kek ORDER BY kek LIMIT 1), n + 1
		FROM k WHERE k.kek IS NOT NULL AND n < $1
) SELECT kek FROM k WHERE kek IS NOT NULL`, limit)
	if err != nil {
		return nil, fmt.Errorf("keys/pgkeys: KEKs: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("keys/pgkeys: KEKs: %w", err)
	}
	return out, nil
}

// BindThread implements keys.ThreadTable.
func (t *Table) BindThread(ctx context.Context, thread, subject string) (string, error) {
	var bound string
	err := t.pool.QueryRow(ctx, `SELECT subject FROM `+t.threads+` WHERE thread_id = $1`, thread).Scan(&bound)
	if errors.Is(err, pgx.ErrNoRows) {
		err = pgx.BeginFunc(ctx, t.pool, func(tx pgx.Tx) error {
			if err := t.lockSubject(ctx, tx, subject); err != nil {
				return err
			}
			if err := t.refuseErasing(ctx, tx, subject); err != nil {
				return err
			}
			err := tx.QueryRow(ctx, `WITH ins AS (INSERT INTO `+t.threads+` (thread_id, subject) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING subject)
SELECT subject FROM ins UNION ALL SELECT subject FROM `+t.threads+` WHERE thread_id = $1 LIMIT 1`, thread, subject).Scan(&bound)
			if errors.Is(err, pgx.ErrNoRows) {
				// A concurrent binding committed after this statement's
				// snapshot: the next statement sees it.
				err = tx.QueryRow(ctx, `SELECT subject FROM `+t.threads+` WHERE thread_id = $1`, thread).Scan(&bound)
			}
			return err
		})
	}
	if errors.Is(err, keys.ErrSubjectErased) {
		return "", err
	}
	if err != nil {
		return "", fmt.Errorf("keys/pgkeys: bind thread: %w", err)
	}
	return bound, nil
}

// BoundSubject implements keys.ThreadTable.
func (t *Table) BoundSubject(ctx context.Context, thread string) (string, error) {
	var s string
	err := t.pool.QueryRow(ctx, `SELECT subject FROM `+t.threads+` WHERE thread_id = $1`, thread).Scan(&s)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("keys/pgkeys: %w", err)
	}
	return s, nil
}

// reach is the threads an erasure of subject ($1) reaches: those bound to
// it and every thread that follows one of them, transitively (UNION, not
// UNION ALL, so that a copy made back onto its source ends the walk).
func (t *Table) reach() string {
	return `WITH RECURSIVE reach(t) AS (
	SELECT thread_id FROM ` + t.threads + ` WHERE subject = $1
	UNION SELECT f.thread_id FROM ` + t.sources + ` f JOIN reach ON f.source = reach.t) `
}

// lockFollows takes the lock that orders FollowThread (shared: records
// of copies run together) against StartErasure (exclusive), for the rest
// of tx: an erasure's walk over the copies sees every record committed
// before it, and a record committed after it sees the erasure.
func (t *Table) lockFollows(ctx context.Context, tx pgx.Tx, exclusive bool) error {
	if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '`+lockWait+`'`); err != nil {
		return fmt.Errorf("keys/pgkeys: %w", err)
	}
	fn := "pg_advisory_xact_lock_shared"
	if exclusive {
		fn = "pg_advisory_xact_lock"
	}
	if _, err := tx.Exec(ctx, `SELECT `+fn+`(hashtextextended($1, 7253))`, t.sources+"/follows"); err != nil {
		return lockErr(err)
	}
	return nil
}

// FollowThread implements keys.ThreadTable.
func (t *Table) FollowThread(ctx context.Context, thread, source string) error {
	err := pgx.BeginFunc(ctx, t.pool, func(tx pgx.Tx) error {
		if err := t.lockFollows(ctx, tx, false); err != nil {
			return err
		}
		var erased string
		// source alone, not what it follows: an erasure binds every
		// unbound thread it reaches to its subject (under the exclusive
		// lock), so a copy of a copy of an erased subject's thread is
		// bound to it; one bound to another subject lost its keys and rows
		// to the erasure and holds only what was written since. A walk up
		// the copies would cost every copy the length of its chain.
		err := tx.QueryRow(ctx, `SELECT b.subject FROM `+t.threads+` b
	JOIN `+t.erasures+` e ON e.subject = b.subject AND NOT e.readmitted WHERE b.thread_id = $1`, source).Scan(&erased)
		if err == nil {
			return fmt.Errorf("keys/pgkeys: copy of %s (%s): %w", idlimit.Name("thread", source), idlimit.Name("subject", erased), keys.ErrSubjectErased)
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO `+t.sources+` (thread_id, source) VALUES ($1, $2) ON CONFLICT DO NOTHING`, thread, source)
		return err
	})
	if errors.Is(err, keys.ErrSubjectErased) {
		return err
	}
	if err != nil {
		return fmt.Errorf("keys/pgkeys: follow thread: %w", err)
	}
	return nil
}

// SubjectThreads implements keys.ThreadTable.
func (t *Table) SubjectThreads(ctx context.Context, subject string) ([]string, error) {
	rows, err := t.pool.Query(ctx, t.reach()+`SELECT t FROM reach ORDER BY t`, subject)
	if err != nil {
		return nil, fmt.Errorf("keys/pgkeys: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("keys/pgkeys: %w", err)
	}
	return out, nil
}

// UnbindThreads implements keys.ThreadTable.
func (t *Table) UnbindThreads(ctx context.Context, subject string) error {
	if _, err := t.pool.Exec(ctx, `DELETE FROM `+t.threads+` WHERE subject = $1`, subject); err != nil {
		return fmt.Errorf("keys/pgkeys: %w", err)
	}
	return nil
}

// FenceSQL implements keys.SQLFencer; "" with Options.ApartFromData.
func (t *Table) FenceSQL() string {
	if t.opts.ApartFromData {
		return ""
	}
	// Typed arguments: see pgaudit's ErasureGuardSQL (an overload planted
	// in another schema of the search path must not be the one called).
	return `SELECT ` + t.fence + `($1::text, $2::text)`
}

const erasureCols = `subject, started_at, key_ids, trace, threads, items, done, finished_at, readmitted`

func (t *Table) scanErasure(row pgx.Row) (*keys.Erasure, error) {
	var (
		e        keys.Erasure
		finished *time.Time
	)
	if err := row.Scan(&e.Subject, &e.Started, &e.KeyIDs, &e.Trace, &e.Threads, &e.Items, &e.Done, &finished, &e.Readmitted); err != nil {
		return nil, err
	}
	if finished != nil {
		e.Finished = *finished
	}
	return &e, nil
}

// StartErasure implements keys.ErasureTable. The key rows' DELETE waits
// for every write that holds one of them (FenceSQL) to commit. The trace
// is the deleting transaction's id.
func (t *Table) StartErasure(ctx context.Context, subject string, now time.Time) (keys.Erasure, error) {
	var out keys.Erasure
	err := pgx.BeginFunc(ctx, t.pool, func(tx pgx.Tx) error {
		if err := t.lockSubject(ctx, tx, subject); err != nil {
			return err
		}
		e, err := t.scanErasure(tx.QueryRow(ctx, `SELECT `+erasureCols+` FROM `+t.erasures+` WHERE subject = $1 FOR UPDATE`, subject))
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && e.Readmitted) {
			e, err = &keys.Erasure{Subject: subject, Started: now}, nil
		}
		if err != nil {
			return fmt.Errorf("keys/pgkeys: %w", err)
		}
		if err := t.lockFollows(ctx, tx, true); err != nil {
			return err
		}
		// Copies of the subject's threads not bound to anyone are bound
		// to it, as tombstones: a stale writer of one gets no key again.
		if _, err := tx.Exec(ctx, t.reach()+`INSERT INTO `+t.threads+` (thread_id, subject) SELECT t, $1 FROM reach ON CONFLICT DO NOTHING`, subject); err != nil {
			return lockErr(err)
		}
		// The subject's keys, and the own keys of every thread the
		// erasure reaches (bound to it, or following one that is).
		rows, err := tx.Query(ctx, t.reach()+`DELETE FROM `+t.table+` WHERE subject = $1
	OR subject IN (SELECT $2 || t FROM reach) RETURNING key_id`, subject, keys.ThreadKeyOwner(""))
		if err != nil {
			return lockErr(err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return lockErr(err)
		}
		e.KeyIDs = keys.MergeKeyIDs(e.KeyIDs, ids)
		var xid string
		if err := tx.QueryRow(ctx, `SELECT pg_current_xact_id()::text`).Scan(&xid); err != nil {
			return fmt.Errorf("keys/pgkeys: %w", err)
		}
		e.Trace = []byte(xid)
		e.Done, e.Finished = false, time.Time{}
		_, err = tx.Exec(ctx, `INSERT INTO `+t.erasures+` (`+erasureCols+`) VALUES ($1, $2, $3, $4, $5, $6, false, NULL, false)
ON CONFLICT (subject) DO UPDATE SET started_at = excluded.started_at, key_ids = excluded.key_ids, trace = excluded.trace,
	threads = excluded.threads, items = excluded.items, done = false, finished_at = NULL, readmitted = false`,
			subject, e.Started, e.KeyIDs, e.Trace, e.Threads, e.Items)
		if err != nil {
			return fmt.Errorf("keys/pgkeys: record erasure: %w", err)
		}
		// Counted for keys.Identified: a copy of the table made before
		// now counts fewer.
		if _, err := tx.Exec(ctx, `INSERT INTO `+t.meta+` (name, value) VALUES ('erasures', '1')
ON CONFLICT (name) DO UPDATE SET value = (`+t.meta+`.value::bigint + 1)::text`); err != nil {
			return fmt.Errorf("keys/pgkeys: record erasure: %w", err)
		}
		out = *e
		return nil
	})
	return out, err
}

// Erasure implements keys.ErasureTable.
func (t *Table) Erasure(ctx context.Context, subject string) (*keys.Erasure, error) {
	e, err := t.scanErasure(t.pool.QueryRow(ctx, `SELECT `+erasureCols+` FROM `+t.erasures+` WHERE subject = $1`, subject))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("keys/pgkeys: %w", err)
	}
	return e, nil
}

// AddErased implements keys.ErasureTable.
func (t *Table) AddErased(ctx context.Context, subject string, threads, items int) error {
	if _, err := t.pool.Exec(ctx, `UPDATE `+t.erasures+` SET threads = GREATEST(threads, $2), items = items + $3 WHERE subject = $1 AND NOT done`, subject, threads, items); err != nil {
		return fmt.Errorf("keys/pgkeys: %w", err)
	}
	return nil
}

// FinishErasure implements keys.ErasureTable.
func (t *Table) FinishErasure(ctx context.Context, subject string, now time.Time) error {
	if _, err := t.pool.Exec(ctx, `UPDATE `+t.erasures+` SET done = true, finished_at = $2 WHERE subject = $1 AND NOT done`, subject, now); err != nil {
		return fmt.Errorf("keys/pgkeys: %w", err)
	}
	return nil
}

// Readmit implements keys.ErasureTable.
func (t *Table) Readmit(ctx context.Context, subject string) error {
	return pgx.BeginFunc(ctx, t.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE `+t.erasures+` SET readmitted = true WHERE subject = $1 AND done`, subject)
		if err != nil {
			return fmt.Errorf("keys/pgkeys: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return keys.ErrNotErased
		}
		// The bindings of its threads were kept as tombstones until now,
		// and what they were copied from or to with them.
		if _, err := tx.Exec(ctx, `DELETE FROM `+t.sources+` WHERE thread_id IN (SELECT thread_id FROM `+t.threads+` WHERE subject = $1)
	OR source IN (SELECT thread_id FROM `+t.threads+` WHERE subject = $1)`, subject); err != nil {
			return fmt.Errorf("keys/pgkeys: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM `+t.threads+` WHERE subject = $1`, subject); err != nil {
			return fmt.Errorf("keys/pgkeys: %w", err)
		}
		return nil
	})
}

// LiveKey implements keys.ErasureTable.
func (t *Table) LiveKey(ctx context.Context, _, keyID string) (bool, error) {
	var live bool
	if err := t.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+t.table+` WHERE key_id = $1)`, keyID).Scan(&live); err != nil {
		return false, fmt.Errorf("keys/pgkeys: %w", err)
	}
	return live, nil
}

// Purge implements keys.ErasureTable. A deleted row stays in the table's
// heap file until no snapshot can see it, and a plain VACUUM frees its
// space without overwriting it. So Purge waits (bounded) until no session,
// prepared transaction or replication slot holds a snapshot older than the
// deleting transaction, then rewrites the table into a new file (VACUUM
// FULL; the old file is unlinked) and checks, from the rewrite's own report,
// that no deleted row version was carried over. Running it needs the
// table's owner. Copies outside the live table — WAL segments not yet
// recycled, WAL archives, replicas, backups — are beyond its reach.
func (t *Table) Purge(ctx context.Context, e keys.Erasure, opt keys.PurgeOptions) error {
	xid := string(e.Trace)
	if _, err := strconv.ParseUint(xid, 10, 64); err != nil {
		return fmt.Errorf("keys/pgkeys: erasure of %s: bad %s", idlimit.Name("subject", e.Subject), idlimit.Name("trace", xid))
	}
	return opt.Retry(ctx, "keys/pgkeys", func(patience time.Duration) (string, error) { return t.purgeOnce(ctx, xid, patience) })
}

// horizonSQL lists what holds a snapshot (or a transaction id) at or
// before the transaction $1 (an xid8), in this cluster: sessions other
// than this one, prepared transactions and replication slots. ages compare
// 32-bit ids relative to the next one, which is exact within the 2^31 ids
// PostgreSQL keeps apart anyway.
const horizonSQL = `WITH x AS (SELECT (($1::text::numeric % 4294967296)::bigint)::text::xid AS xid)
SELECT 'session ' || pid::text || coalesce(' (' || nullif(application_name, '') || ')', '') FROM pg_stat_activity, x
	WHERE pid <> pg_backend_pid() AND (datname = current_database() OR datname IS NULL)
	  AND ((backend_xmin IS NOT NULL AND age(backend_xmin) >= age(x.xid)) OR (backend_xid IS NOT NULL AND age(backend_xid) >= age(x.xid)))
UNION ALL
SELECT 'prepared transaction ' || gid FROM pg_prepared_xacts, x WHERE age(transaction) >= age(x.xid)
UNION ALL
SELECT 'replication slot ' || slot_name FROM pg_replication_slots, x WHERE xmin IS NOT NULL AND age(xmin) >= age(x.xid)`

// deadRowsRE reads VACUUM FULL VERBOSE's report of deleted row versions it
// had to keep (PostgreSQL's English messages).
var deadRowsRE = regexp.MustCompile(`(\d+) dead row versions cannot be removed yet`)

// purgeOnce returns why the destroyed keys may still be in the table's
// file ("" once they are not).
func (t *Table) purgeOnce(ctx context.Context, xid string, patience time.Duration) (string, error) {
	rows, err := t.pool.Query(ctx, horizonSQL, xid)
	if err != nil {
		return "", fmt.Errorf("keys/pgkeys: %w", err)
	}
	holders, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", fmt.Errorf("keys/pgkeys: %w", err)
	}
	if len(holders) > 0 {
		if len(holders) > 5 {
			holders = append(holders[:5], fmt.Sprintf("%d more", len(holders)-5))
		}
		return "snapshots from before the keys were destroyed are still open (" + strings.Join(holders, ", ") + ")", nil
	}
	// A connection of its own, to read the rewrite's report.
	cfg := t.pool.Config().ConnConfig.Copy()
	var (
		mu   sync.Mutex
		dead = -1
	)
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		mu.Lock()
		defer mu.Unlock()
		if m := deadRowsRE.FindStringSubmatch(n.Detail); m != nil {
			d, _ := strconv.Atoi(m[1])
			dead = max(dead, 0) + d
		}
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return "", fmt.Errorf("keys/pgkeys: %w", err)
	}
	defer conn.Close(context.Background())
	// VACUUM FULL waits for every transaction holding a key row (a write's
	// fence) while writers queue behind it: bound the wait by the purge's
	// patience and report a wait that gave up as what holds the erasure.
	if _, err := conn.Exec(ctx, fmt.Sprintf(`SET lock_timeout = %d`, max(patience.Milliseconds(), 1))); err != nil {
		return "", fmt.Errorf("keys/pgkeys: %w", err)
	}
	if _, err := conn.Exec(ctx, `VACUUM (FULL, VERBOSE) `+t.table); err != nil {
		if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && pgErr.Code == "55P03" {
			return "an open transaction holds the key table (a write of a subject, or a key read)", nil
		}
		return "", fmt.Errorf("keys/pgkeys: rewrite the key table (VACUUM FULL needs its owner): %w", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if dead > 0 {
		return fmt.Sprintf("%d deleted key row versions are still visible to an open snapshot", dead), nil
	}
	return "", nil
}
