package pgaudit

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/internal/batchrow"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/internal/pgmigrate"
	"github.com/memvault/memvault/keys"
)

// Options configures a Table. The zero value is usable.
type Options struct {
	// Schema holds the table; empty means the connection's search path.
	Schema string
}

// Table is an audit.Table in PostgreSQL.
type Table struct {
	pool    *pgxpool.Pool
	opts    Options
	table   string
	name    pgx.Identifier // the table
	pending string         // the pending records' table (audit.PendingTable), quoted
	// lock is the key of the advisory lock serialising appends
	// (appendLock): set by New for a named schema, else on first use.
	lock atomic.Pointer[int64]
}

var _ audit.ChainRowTable = (*Table)(nil)

var columns = []string{"seq", "at", "principal", "op", "target", "subject", "key_id", "link", "mac", "pending_id", "more"}

// selectColumns are a row's columns: its last record's, the pending id of
// its first, and the records before its last (batchrow).
const selectColumns = `seq, at, principal, op, target, subject, key_id, link, mac, pending_id, more`

// New returns the trail table on pool; call Setup once to create it.
func New(pool *pgxpool.Pool, opts Options) (*Table, error) {
	if pool == nil {
		return nil, errors.New("audit/pgaudit: nil pool")
	}
	t := &Table{pool: pool, opts: opts, table: "memvault_audit", name: pgx.Identifier{"memvault_audit"}, pending: "memvault_audit_pending"}
	if opts.Schema != "" {
		t.name = pgx.Identifier{opts.Schema, "memvault_audit"}
		t.table = t.name.Sanitize()
		t.pending = pgx.Identifier{opts.Schema, "memvault_audit_pending"}.Sanitize()
	}
	if opts.Schema != "" {
		k := lockKey(opts.Schema)
		t.lock.Store(&k)
	}
	return t, nil
}

// lockKey is the key of the advisory lock of the trail in schema: FNV-1a
// of "memvault/audit/" and the table's schema-qualified, quoted name.
//
// The key of a trail in a named schema (Options.Schema) is the one every
// earlier build took: processes of this build and of earlier ones on one
// trail take turns as before. A trail named by the search path
// (Options.Schema empty) took, before session 39, the key of the bare
// name "memvault_audit": one key for every schema of the database, so
// the appenders of unrelated trails in different schemas waited for each
// other, and a read that chains its own record (ChainRow) found the lock
// held by another trail's appender and left its record pending. It now
// takes the key of the schema its table is in (appendLock), the key a
// process naming that schema in Options.Schema takes: the two ways of
// naming one trail share one lock, which they did not before (appenders
// of the two read the same last record, and the primary key on seq then
// failed one of them). The one pairing that no longer takes turns is an
// earlier build's process on a search-path trail beside this build's:
// both read the last record, and one of their appends fails on the
// primary key (seq) or ChainRow's unique indexes instead of waiting —
// nothing is forked or lost, the failed operation reports its error
// (upgrade the processes of such a trail together).
func lockKey(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("memvault/audit/" + pgx.Identifier{schema, "memvault_audit"}.Sanitize()))
	return int64(h.Sum64())
}

// lockSchemaSQL names the schema of the unqualified trail table: where
// the search path finds memvault_audit (found), or, before it exists,
// where Setup creates it (current_schema(); NULL without a schema to
// create in).
const lockSchemaSQL = `SELECT coalesce((SELECT n.nspname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.oid = to_regclass('memvault_audit')), current_schema()::text), to_regclass('memvault_audit') IS NOT NULL`

// appendLock returns the key of the trail's advisory lock (lockKey),
// reading on q the schema the search path finds the table in when the
// Options name none. It keeps the key once the table is found (a pool's
// connections share their search path); before, the key of the schema
// Setup would create it in is returned and not kept.
func (t *Table) appendLock(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (int64, error) {
	if k := t.lock.Load(); k != nil {
		return *k, nil
	}
	var schema *string
	var found bool
	if err := q.QueryRow(ctx, lockSchemaSQL).Scan(&schema, &found); err != nil {
		return 0, fmt.Errorf("schema of the trail: %w", err)
	}
	if schema == nil {
		return 0, errors.New("schema of the trail: the search path names no schema")
	}
	k := lockKey(*schema)
	if found {
		t.lock.Store(&k)
	}
	return k, nil
}

// migrationFiles holds the DDL this package runs, one statement per file,
// through internal/pgmigrate: migrations/audit/NN_*.sql is the trail
// ({audit}), tracked in memvault_audit_migrations; migrations/meta/NN_*.sql
// is memvault_meta ({meta}) in the data's schema, tracked in
// memvault_meta_migrations. memvault's own tables; LangGraph has none.
// Append new files; never edit a released one.
//
//go:embed migrations/audit/*.sql migrations/meta/*.sql
var migrationFiles embed.FS

// migrationSet is the trail's migrations with t's table name filled in.
func (t *Table) migrationSet() (pgmigrate.Set, error) {
	stmts, err := pgmigrate.Load(migrationFiles, "migrations/audit", map[string]string{"audit": t.table, "pending": t.pending})
	return pgmigrate.Set{Table: "memvault_audit_migrations", Statements: stmts}, err
}

// Setup creates the table when missing, or upgrades it; it is safe to run
// concurrently. It holds memvault's one setup advisory lock
// (internal/pgmigrate) on a connection of the pool, and returns without
// waiting for it when the table is already set up.
func (t *Table) Setup(ctx context.Context) error {
	return t.setup(ctx, t.pool)
}

// SetupTx is Setup inside tx, a transaction the caller began on the
// trail's database and commits or rolls back: the table and its migration
// records are created with the caller's other writes, or not at all. It
// holds the setup lock until tx ends (a transaction-scoped advisory lock),
// so concurrent setups wait for the caller's commit or rollback.
func (t *Table) SetupTx(ctx context.Context, tx pgx.Tx) error {
	if tx == nil {
		return fmt.Errorf("audit/pgaudit: setup: %w", ErrNilTx)
	}
	return t.setup(ctx, tx)
}

// ErrNilTx is returned by SetupTx without a transaction.
var ErrNilTx = errors.New("audit/pgaudit: nil transaction")

func (t *Table) setup(ctx context.Context, db any) error {
	set, err := t.migrationSet()
	if err != nil {
		return fmt.Errorf("audit/pgaudit: setup: %w", err)
	}
	if err := pgmigrate.Run(ctx, db, t.opts.Schema, set); err != nil {
		return fmt.Errorf("audit/pgaudit: setup: %w", err)
	}
	return nil
}

// Append implements audit.Table in one transaction holding an advisory
// lock, so appenders of every process take turns. It costs two round trips
// and the commit: BEGIN, the lock and the read of the last record go
// pipelined in one, the records (all of a group commit's, whatever their
// number) and COMMIT in the other; the lock is taken before the read's
// statement starts, so the read sees every record committed before it.
func (t *Table) Append(ctx context.Context, chain func(*audit.Record) ([]audit.Record, error)) error {
	conn, err := t.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("audit/pgaudit: %w", err)
	}
	defer conn.Release()
	if err := t.append(ctx, conn.Conn(), chain); err != nil {
		return fmt.Errorf("audit/pgaudit: %w", err)
	}
	return nil
}

// pendingColumns are the pending table's columns, in Pending's order.
var pendingColumns = []string{"id", "at", "principal", "op", "target", "subject", "key_id", "mac"}

// AddPending implements audit.PendingTable: one INSERT, one commit. A
// pending record holding a batch (Pending.More) is one row.
func (t *Table) AddPending(ctx context.Context, ps []audit.Pending) error {
	if len(ps) == 1 {
		// The readers' group commit inserts one row (its batch's): scalar
		// parameters, not arrays for unnest, whose encoding (reflection
		// over []string and []*string) cost the client more than the rest
		// of the INSERT.
		p := &ps[0]
		var more *string
		if m := batchrow.PendingMore(p); m != "" {
			more = &m
		}
		if _, err := t.pool.Exec(ctx, `INSERT INTO `+t.pending+` (id, at, principal, op, target, subject, key_id, mac, more)
VALUES ($1::text, $2::timestamptz, $3::text, $4::text, $5::text, $6::text, $7::text, $8::text, $9::text)`,
			p.ID, p.Time, p.Principal, p.Op, p.Target, p.Subject, p.KeyID, p.MAC, more); err != nil {
			return fmt.Errorf("audit/pgaudit: pending records: %w", err)
		}
		return nil
	}
	cols := make([][]string, len(pendingColumns)-1)
	at := make([]time.Time, len(ps))
	more := make([]*string, len(ps))
	for i := range cols {
		cols[i] = make([]string, len(ps))
	}
	for i := range ps {
		p := &ps[i]
		at[i] = p.Time
		for j, v := range []string{p.ID, p.Principal, p.Op, p.Target, p.Subject, p.KeyID, p.MAC} {
			cols[j][i] = v
		}
		if m := batchrow.PendingMore(p); m != "" {
			more[i] = &m
		}
	}
	_, err := t.pool.Exec(ctx, `INSERT INTO `+t.pending+` (id, at, principal, op, target, subject, key_id, mac, more)
SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])`,
		cols[0], at, cols[1], cols[2], cols[3], cols[4], cols[5], cols[6], more)
	if err != nil {
		return fmt.Errorf("audit/pgaudit: pending records: %w", err)
	}
	return nil
}

// chainColumns are the columns of a record a read chains itself
// (ChainRow): one record, no pending id, no batch.
var chainColumns = []string{"seq", "at", "principal", "op", "target", "subject", "key_id", "link", "mac"}

// ChainRow implements audit.ChainRowTable. The insert takes the advisory
// lock every appender takes (RecordRow.After) if it is free, and fails
// the read's statement at once if it is not, or if the record before r is
// not stored with link prevLink (the trail was cut back or wiped behind
// this process: r would follow a gap or another record) — division by
// zero, SQLSTATE 22012, raised on purpose: a plain SQL statement has no
// other way to fail; pg_backend_pid keeps the planner from raising it
// whatever the lock. A read never waits for an appender — another
// process's group commit, a chaining run — and no appender reads the last
// record while the read's record is in flight and then fails on its
// sequence number. The statement's snapshot may predate the lock, so the
// record it was linked after may not be the last any more: then another
// appender's committed row holds r's sequence number or begins with it,
// and a unique index fails the statement. Either way nothing was stored
// (IsChainConflict), and the read records as before.
func (t *Table) ChainRow(r audit.Record, prevLink string) *checkpointer.RecordRow {
	return &checkpointer.RecordRow{Table: t.table, Columns: chainColumns,
		Values:      []any{r.Seq, r.Time, r.Principal, r.Op, r.Target, r.Subject, r.KeyID, r.Link, r.MAC},
		After:       t.chainAfter,
		AfterValues: []any{r.Seq - 1, prevLink}}
}

// chainAfter is ChainRow's RecordRow.After: the appenders' lock, and the
// record r follows (its sequence number param(0), its link param(1)).
//
// The lock's key is known once this process appended (appendLock); a
// read chains its record only after that (audit.Trail's known head), but
// should it come before, the statement fails as if the lock were held.
func (t *Table) chainAfter(param func(i int) string) string {
	try := "false"
	if k := t.lock.Load(); k != nil {
		try = `pg_try_advisory_xact_lock(` + strconv.FormatInt(*k, 10) + `)`
	}
	return `SELECT CASE WHEN ` + try + `
AND EXISTS (SELECT 1 FROM ` + t.table + ` WHERE seq = ` + param(0) + `::bigint AND link = ` + param(1) + `::text) THEN 0
ELSE 1 / (pg_backend_pid() * 0) END`
}

// IsChainConflict implements audit.ChainRowTable: the trail's lock was
// held or the record before the row's is not the one it follows
// (ChainRow's division by zero), or a row is linked after the same
// record already: it holds the sequence number (the primary key) or
// begins with it (a batch's row, migration 08's unique index).
func (t *Table) IsChainConflict(err error) bool {
	e, ok := errors.AsType[*pgconn.PgError](err)
	return ok && (e.Code == "22012" ||
		e.Code == "23505" && (e.ConstraintName == "memvault_audit_pkey" || e.ConstraintName == "memvault_audit_row_first"))
}

// PendingRow implements audit.PendingTable.
func (t *Table) PendingRow(p audit.Pending) *checkpointer.RecordRow {
	return &checkpointer.RecordRow{Table: t.pending, Columns: pendingColumns,
		Values: []any{p.ID, p.Time, p.Principal, p.Op, p.Target, p.Subject, p.KeyID, p.MAC}}
}

// AppendPending implements audit.PendingTable as Append does, in two
// round trips and the commit (the pending table's index on (at, id),
// migration 05, serves its ORDER BY: the table's deleted rows stay until
// vacuumed, and a scan would read them every run; about 100 bytes of WAL
// per record): BEGIN, the lock, the last record and the
// oldest pending records in one (read after the lock is held, so no other
// chainer has them: it chained and deleted them before, or waits); the
// chained records, the pending rows' delete and COMMIT in the other.
func (t *Table) AppendPending(ctx context.Context, limit int, chain func(*audit.Record, []audit.Pending) ([]audit.Record, error)) error {
	conn, err := t.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("audit/pgaudit: %w", err)
	}
	defer conn.Release()
	var pending []audit.Pending
	err = t.appendFn(ctx, conn.Conn(), func(b *pgx.Batch) {
		b.Queue(t.pendingSelect()+` ORDER BY p.at, p.id LIMIT $1`, limit).Query(func(rows pgx.Rows) error {
			var err error
			pending, err = pgx.CollectRows(rows, scanPending)
			return err
		})
	}, func(last *audit.Record) ([]audit.Record, error) { return chain(last, pending) }, func(b *pgx.Batch) {
		if len(pending) == 0 {
			return
		}
		ids := make([]string, len(pending))
		for i, p := range pending {
			ids[i] = p.ID
		}
		b.Queue(`DELETE FROM `+t.pending+` WHERE id = ANY($1)`, ids)
	})
	if err != nil {
		return fmt.Errorf("audit/pgaudit: %w", err)
	}
	return nil
}

// pendingSelect reads pending rows p, each with the sequence number of the
// chained record that holds its id (0: none; the trail's unique index on
// pending_id makes it one lookup).
func (t *Table) pendingSelect() string {
	return `SELECT p.id, p.at, p.principal, p.op, p.target, p.subject, p.key_id, p.mac, coalesce(a.seq, 0), p.more
FROM ` + t.pending + ` p LEFT JOIN ` + t.table + ` a ON a.pending_id = p.id`
}

// scanPending reads a row of pendingSelect.
func scanPending(r pgx.CollectableRow) (audit.Pending, error) {
	var p audit.Pending
	var more *string
	err := r.Scan(&p.ID, &p.Time, &p.Principal, &p.Op, &p.Target, &p.Subject, &p.KeyID, &p.MAC, &p.Chained, &more)
	p.Time = p.Time.UTC()
	if more != nil {
		batchrow.ExpandPending(&p, *more)
	}
	return p, err
}

// PagePending implements audit.PendingTable.
func (t *Table) PagePending(ctx context.Context, afterTime time.Time, afterID string, limit int) ([]audit.Pending, error) {
	rows, err := t.pool.Query(ctx, t.pendingSelect()+`
WHERE (p.at, p.id) > ($1, $2) ORDER BY p.at, p.id LIMIT $3`, afterTime, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("audit/pgaudit: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanPending)
	if err != nil {
		return nil, fmt.Errorf("audit/pgaudit: %w", err)
	}
	return out, nil
}

// append runs the transaction on c. When it fails midway, c is left in
// the transaction and the pool, on Release, closes it rather than keep a
// connection that is not idle: the session's end rolls the transaction
// back and frees the lock.
func (t *Table) append(ctx context.Context, c *pgx.Conn, chain func(*audit.Record) ([]audit.Record, error)) error {
	return t.appendFn(ctx, c, nil, chain, nil)
}

// appendFn is append with read queuing more reads after the last
// record's, and write more statements before COMMIT.
func (t *Table) appendFn(ctx context.Context, c *pgx.Conn, read func(*pgx.Batch), chain func(*audit.Record) ([]audit.Record, error), write func(*pgx.Batch)) error {
	lock, err := t.appendLock(ctx, c)
	if err != nil {
		return err
	}
	b := &pgx.Batch{}
	b.Queue(`BEGIN`)
	b.Queue(`SELECT pg_advisory_xact_lock($1)`, lock)
	var last *audit.Record
	var r audit.Record
	b.Queue(`SELECT seq, link, mac FROM ` + t.table + ` ORDER BY seq DESC LIMIT 1`).QueryRow(func(row pgx.Row) error {
		err := row.Scan(&r.Seq, &r.Link, &r.MAC)
		switch {
		case err == nil:
			last = &r
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		return nil
	})
	if read != nil {
		read(b)
	}
	if err := c.SendBatch(ctx, b).Close(); err != nil {
		return err
	}
	rs, err := chain(last)
	if err != nil {
		return err
	}
	// One row per batchrow.Split row: a batch of reads' records is one.
	rows := batchrow.Split(rs)
	cols := make([]any, len(columns))
	seq, at := make([]int64, len(rows)), make([]time.Time, len(rows))
	text := make([][]string, len(columns)-4)
	for i := range text {
		text[i] = make([]string, len(rows))
	}
	// NULL for a record appended directly: the unique index on
	// pending_id lets every such record have none.
	pendingIDs, more := make([]*string, len(rows)), make([]*string, len(rows))
	for i, row := range rows {
		r := &row[len(row)-1]
		seq[i], at[i] = r.Seq, r.Time
		for j, v := range []string{r.Principal, r.Op, r.Target, r.Subject, r.KeyID, r.Link, r.MAC} {
			text[j][i] = v
		}
		if row[0].PendingID != "" {
			pendingIDs[i] = &row[0].PendingID
		}
		if m := batchrow.More(row); m != "" {
			more[i] = &m
		}
	}
	cols[0], cols[1] = seq, at
	for i := range text {
		cols[i+2] = text[i]
	}
	cols[len(cols)-2], cols[len(cols)-1] = pendingIDs, more
	b = &pgx.Batch{}
	b.Queue(`INSERT INTO `+t.table+` (`+selectColumns+`)
SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[])`, cols...)
	if write != nil {
		write(b)
	}
	var tag pgconn.CommandTag
	b.Queue(`COMMIT`).Exec(func(ct pgconn.CommandTag) error { tag = ct; return nil })
	if err := c.SendBatch(ctx, b).Close(); err != nil {
		return err
	}
	if tag.String() != "COMMIT" {
		// A transaction that failed answers COMMIT with ROLLBACK.
		return fmt.Errorf("the transaction was rolled back (%s)", tag)
	}
	return nil
}

// scan reads a row of selectColumns: its records (batchrow.Expand).
func scan(row pgx.Row) ([]audit.Record, error) {
	var a audit.Record
	var pending, more *string
	if err := row.Scan(&a.Seq, &a.Time, &a.Principal, &a.Op, &a.Target, &a.Subject, &a.KeyID, &a.Link, &a.MAC, &pending, &more); err != nil {
		return nil, err
	}
	a.Time = a.Time.UTC()
	if pending != nil {
		a.PendingID = *pending
	}
	if more == nil {
		return []audit.Record{a}, nil
	}
	return batchrow.Expand(a, *more)
}

// Page implements audit.Table. A row is keyed by its last record's
// sequence number, so the rows after after hold every record after it;
// those of the first row up to after, and those past limit, are dropped.
func (t *Table) Page(ctx context.Context, after int64, limit int) ([]audit.Record, error) {
	rows, err := t.pool.Query(ctx, `SELECT `+selectColumns+` FROM `+t.table+` WHERE seq > $1 ORDER BY seq LIMIT $2`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("audit/pgaudit: %w", err)
	}
	defer rows.Close()
	var out []audit.Record
	for len(out) < limit && rows.Next() {
		rs, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("audit/pgaudit: %w", err)
		}
		for _, r := range rs {
			if r.Seq > after && len(out) < limit {
				out = append(out, r)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("audit/pgaudit: %w", err)
	}
	return out, nil
}

// DatabaseID returns the id of the data database memvault uses on pool in
// schema ("" for the search path; the checkpointer's and the store's
// schema, not the trail's): 32 random hex digits, created the first time in
// the schema's memvault_meta table (migrated under the schema's migration
// lock) and never changed. A trail bound to it (audit.Options.DatabaseID)
// verifies next to this schema's data only.
func DatabaseID(ctx context.Context, pool *pgxpool.Pool, schema string) (string, error) {
	tbl := metaTable(schema)
	var id string
	var exists bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, tbl).Scan(&exists); err != nil {
		return "", fmt.Errorf("audit/pgaudit: database id: %w", err)
	}
	if exists {
		if err := pool.QueryRow(ctx, `SELECT value FROM `+tbl+` WHERE name = 'database_id'`).Scan(&id); err == nil {
			return id, nil
		}
	}
	if err := migrateMeta(ctx, pool, schema); err != nil {
		return "", fmt.Errorf("audit/pgaudit: database id: %w", err)
	}
	fresh := make([]byte, 16)
	_, _ = rand.Read(fresh)
	// Of two processes creating the id at once, the first insert wins and
	// both read its id.
	if _, err := pool.Exec(ctx, `INSERT INTO `+tbl+` (name, value) VALUES ('database_id', $1) ON CONFLICT (name) DO NOTHING`, hex.EncodeToString(fresh)); err != nil {
		return "", fmt.Errorf("audit/pgaudit: database id: %w", err)
	}
	if err := pool.QueryRow(ctx, `SELECT value FROM `+tbl+` WHERE name = 'database_id'`).Scan(&id); err != nil {
		return "", fmt.Errorf("audit/pgaudit: database id: %w", err)
	}
	return id, nil
}

// metaTable is the memvault_meta table of schema, quoted.
func metaTable(schema string) string {
	if schema != "" {
		return pgx.Identifier{schema, "memvault_meta"}.Sanitize()
	}
	return pgx.Identifier{"memvault_meta"}.Sanitize()
}

// erasureFence is the erasure guard function of schema, quoted (see
// ErasureGuardSQL).
func erasureFence(schema string) string {
	if schema != "" {
		return pgx.Identifier{schema, "memvault_erasure_fence"}.Sanitize()
	}
	return pgx.Identifier{"memvault_erasure_fence"}.Sanitize()
}

// fenceSQLState is keys.FenceSQLState (the audit packages sit beside the
// keys package, not above it): the SQLSTATE of a write the erasure guard
// refuses.
const fenceSQLState = "MV001"

// epochSQLState is the SQLSTATE of a write the erasure guard refuses for
// want of its subject's epoch row (meta migration 03): not an erasure of
// the subject, so not keys.FenceSQLState.
const epochSQLState = "MV002"

// epochRowsSQL puts back the 64 erasure epoch rows (meta migration 02),
// should one have been deleted.
const epochRowsSQL = `INSERT INTO %s (name, value) SELECT 'erasure_epoch:' || b, '0' FROM generate_series(0, 63) AS b ON CONFLICT (name) DO NOTHING`

// bumpEpochSQL rewrites the epoch row of the subject $1 (meta migration
// 03 reads the same one).
const bumpEpochSQL = `INSERT INTO %s (name, value) VALUES ('erasure_epoch:' || ((hashtextextended($1, 64) %% 64 + 64) %% 64), '0')
ON CONFLICT (name) DO UPDATE SET value = excluded.value`

// erasureLockSQL takes, for a statement, the lock of subject's erasures
// the guard function holds shared for its write's transaction.
const erasureLockSQL = `SELECT pg_advisory_xact_lock(hashtextextended('memvault_erasure/' || $1, 0))`

// metaSet is memvault_meta's migrations in schema.
func metaSet(schema string) (pgmigrate.Set, error) {
	stmts, err := pgmigrate.Load(migrationFiles, "migrations/meta", map[string]string{
		"meta": metaTable(schema), "erasure_fence": erasureFence(schema), "fence_sqlstate": fenceSQLState, "epoch_sqlstate": epochSQLState})
	return pgmigrate.Set{Table: "memvault_meta_migrations", Statements: stmts}, err
}

// migrateMeta creates schema's memvault_meta table when missing.
func migrateMeta(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	set, err := metaSet(schema)
	if err != nil {
		return err
	}
	return pgmigrate.Run(ctx, pool, schema, set)
}

// chainRow is the memvault_meta row that records that the trail's hash
// chain (audit format 2) began; its value is the format.
const chainRow = "audit_chain"

// Meta returns the audit.Meta of the data database memvault uses on pool
// in schema ("" for the search path; the checkpointer's and the store's
// schema, not the trail's): a row of the schema's memvault_meta table,
// next to the database id, that whoever can write only the trail cannot
// remove.
func Meta(pool *pgxpool.Pool, schema string) audit.Meta { return meta{pool, schema} }

type meta struct {
	pool   *pgxpool.Pool
	schema string
}

// ChainBegan implements audit.Meta.
func (m meta) ChainBegan(ctx context.Context) (bool, error) { return m.Marked(ctx, chainRow) }

// MarkChainBegan implements audit.Meta.
func (m meta) MarkChainBegan(ctx context.Context) error { return m.Mark(ctx, chainRow, "2") }

// Marked reports whether the data schema's memvault_meta table holds the
// row name (a mark such as the audit chain's beginning). It only reads: a
// schema without the table holds no mark.
func (m meta) Marked(ctx context.Context, name string) (bool, error) {
	_, ok, err := m.MarkValue(ctx, name)
	return ok, err
}

// MarkValue returns the value of the mark name, and whether the data
// schema holds it. It only reads.
func (m meta) MarkValue(ctx context.Context, name string) (string, bool, error) {
	tbl, exists, err := m.table(ctx)
	if err != nil || !exists {
		return "", false, err
	}
	var value string
	err = m.pool.QueryRow(ctx, `SELECT value FROM `+tbl+` WHERE name = $1`, name).Scan(&value)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("audit/pgaudit: meta: %w", err)
	}
	return value, true, nil
}

// table returns the data schema's memvault_meta table, qualified, and
// whether it exists: reads of marks create nothing.
func (m meta) table(ctx context.Context) (string, bool, error) {
	tbl := metaTable(m.schema)
	var exists bool
	if err := m.pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, tbl).Scan(&exists); err != nil {
		return "", false, fmt.Errorf("audit/pgaudit: meta: %w", err)
	}
	return tbl, exists, nil
}

// Mark records, for good, the row name with value in the data schema's
// memvault_meta table (a row already there keeps its value).
func (m meta) Mark(ctx context.Context, name, value string) error {
	if err := migrateMeta(ctx, m.pool, m.schema); err != nil {
		return fmt.Errorf("audit/pgaudit: meta: %w", err)
	}
	if _, err := m.pool.Exec(ctx, `INSERT INTO `+metaTable(m.schema)+` (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, name, value); err != nil {
		return fmt.Errorf("audit/pgaudit: meta: %w", err)
	}
	return nil
}

// ErasureGuardSQL creates the data schema's memvault_meta table and its
// erasure guard function when missing, and returns the statement writes
// run in their transaction (keys.ErasureGuard.GuardSQL): with a subject and
// the count of erasures of the writer's key table, it fails with SQLSTATE
// keys.FenceSQLState when the row keys.ErasedSubjectMark(subject) holds a
// greater number, after taking the subject's erasure lock shared until
// the write's transaction ends (see MarkErasure).
func (m meta) ErasureGuardSQL(ctx context.Context) (string, error) {
	if err := migrateMeta(ctx, m.pool, m.schema); err != nil {
		return "", fmt.Errorf("audit/pgaudit: meta: %w", err)
	}
	// Rows deleted since (an operator clearing memvault_meta, a partial
	// restore) would fail every REPEATABLE READ write: put back at Open.
	if _, err := m.pool.Exec(ctx, fmt.Sprintf(epochRowsSQL, metaTable(m.schema))); err != nil {
		return "", fmt.Errorf("audit/pgaudit: meta: %w", err)
	}
	// The arguments' types are stated: with parameters of unknown type,
	// PostgreSQL would pick the overload of the name that fits them best
	// in any schema of the search path, one planted after the data's
	// included (TestReviewS25PlantedGuardOverload).
	return `SELECT ` + erasureFence(m.schema) + `($1::text, $2::bigint)`, nil
}

// ErasedPast reports whether the row keys.ErasedSubjectMark(subject) holds a
// number greater than known (keys.ErasureGuard.ErasedPast).
func (m meta) ErasedPast(ctx context.Context, subject string, known int64) (bool, error) {
	var value string
	err := m.pool.QueryRow(ctx, `SELECT value FROM `+metaTable(m.schema)+` WHERE name = $1`, keys.ErasedSubjectMark(subject)).Scan(&value)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("audit/pgaudit: meta: %w", err)
	}
	return keys.ErasedPastMark(value, known), nil
}

// MarkErasure records n, the number of an erasure of subject that begins,
// under keys.ErasedSubjectMark(subject) (unless it holds a greater one), then
// waits for every write of subject whose transaction took the erasure
// guard before the record committed: those that read the guard before it
// and still may commit. A write's guard after it refuses the write, so
// once MarkErasure returns no write of the subject by a process on a copy
// of the key table commits that the erasure's deletion of rows does not
// see.
func (m meta) MarkErasure(ctx context.Context, subject string, n int64) error {
	if err := m.AdvanceMark(ctx, keys.ErasedSubjectMark(subject), n); err != nil {
		return err
	}
	// Bounded as the key table bounds its lock waits (keys/pgkeys): a
	// caller's transaction that wrote the subject and then waits, through
	// the application, for another write of it (queued behind this lock)
	// would otherwise hold the erasure forever. The erasure then fails
	// before destroying any key, and runs again.
	err := pgx.BeginFunc(ctx, m.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '`+erasureLockWait+`'`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, erasureLockSQL, subject); err != nil {
			return err
		}
		// A new version of the epoch row: a REPEATABLE READ or
		// SERIALIZABLE transaction that began before the mark committed
		// can no longer pass the guard (migration meta/03), and one that
		// passed it already is waited for here, before any row of the
		// subject is deleted.
		_, err := tx.Exec(ctx, fmt.Sprintf(bumpEpochSQL, metaTable(m.schema)), subject)
		return err
	})
	if err != nil {
		return fmt.Errorf("audit/pgaudit: meta: wait for the writes of %q that began before its erasure (a transaction held open for %s?): %w", subject, erasureLockWait, err)
	}
	return nil
}

// erasureLockWait bounds MarkErasure's wait for the writes of a subject.
const erasureLockWait = "10s"

// AdvanceMark records the count n under the row name of the data schema's
// memvault_meta table, unless the row holds a greater count already: a
// mark that only grows (the key table's erasures, see vault). A row whose
// value is not a count (keys.ParseMarkCount) is replaced: whoever can
// write only the data database must not keep an erasure from beginning
// (TestReviewS25PlantedMarkBlocksForget).
func (m meta) AdvanceMark(ctx context.Context, name string, n int64) error {
	if err := migrateMeta(ctx, m.pool, m.schema); err != nil {
		return fmt.Errorf("audit/pgaudit: meta: %w", err)
	}
	tbl := metaTable(m.schema)
	if _, err := m.pool.Exec(ctx, `INSERT INTO `+tbl+` (name, value) VALUES ($1, $2)
ON CONFLICT (name) DO UPDATE SET value = excluded.value
WHERE CASE WHEN `+tbl+`.value ~ '^(0|[1-9][0-9]{0,17})$' THEN `+tbl+`.value::bigint < excluded.value::bigint ELSE true END`, name, strconv.FormatInt(n, 10)); err != nil {
		return fmt.Errorf("audit/pgaudit: meta: %w", err)
	}
	return nil
}
