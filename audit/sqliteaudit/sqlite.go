package sqliteaudit

import (
	"context"
	"crypto/rand"
	"database/sql"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/internal/batchrow"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/internal/idlimit"
	"github.com/memvault/memvault/internal/sqlfence"
	"github.com/memvault/memvault/internal/sqlitedb"
	"github.com/memvault/memvault/keys"
)

// migrationFiles holds the SQLite schemas this package makes, run by
// sqlitedb.Migrate: migrations/audit/NN_*.sql (component "audit", the
// trail's file) and migrations/meta/NN_*.sql (component "meta", in the data
// database: memvault_meta). memvault's own tables; LangGraph has none.
// Append new files; never edit a released one (schema_test.go holds them to
// the steps of earlier builds).
//
//go:embed migrations/audit/*.sql migrations/meta/*.sql
var migrationFiles embed.FS

// migrations are the trail's schema steps, in order.
var migrations = sqlitedb.MustLoad(migrationFiles, "migrations/audit")

// columns are a row's: its last record's, the pending id of its first,
// and the records before its last (batchrow).
const columns = `seq, at, principal, op, target, subject, key_id, link, mac, pending_id, more`

// Table is an audit.Table in a SQLite database.
type Table struct {
	db *sqlitedb.DB
	// stmts are the hot statements (a read's pending record, a chained
	// row, a chained pending row's delete), prepared once on the writer
	// pool rather than parsed in every write transaction.
	stmts sqlitedb.StmtCache
}

// The hot statements (Table.stmts).
const (
	sqlInsert        = `INSERT INTO memvault_audit (` + columns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	sqlInsertPending = `INSERT INTO memvault_audit_pending (id, at, principal, op, target, subject, key_id, mac, more)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
	// sqlDeletePendings deletes the pending rows whose ids its JSON
	// array lists: one statement for a chaining run's rows.
	sqlDeletePendings = `DELETE FROM memvault_audit_pending WHERE id IN (SELECT value FROM json_each(?))`
)

// Not an audit.ChainRowTable: a read that chained its own record would
// write three pages of the file (the trail's rows and its two unique
// indexes) in its transaction, where a pending row wrote two (one since
// migration 05) and the chainer moves many at once — measured, 13.9 KB
// written a lone read against 9.8 KB, at the same CPU.
var _ audit.PendingTable = (*Table)(nil)

// Open opens (creating when missing) the trail in the SQLite file at path.
func Open(ctx context.Context, path string) (*Table, error) {
	db, err := sqlitedb.Open(path, sqlitedb.Options{})
	if err != nil {
		return nil, fmt.Errorf("audit/sqliteaudit: %w", err)
	}
	if err := migrate(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("audit/sqliteaudit: %w", err)
	}
	return &Table{db: db}, nil
}

// ownTriggerPrefix starts the name of every trigger and index memvault
// makes on the trail's tables: a migration dropping one of those means it.
const ownTriggerPrefix = "memvault_"

// migrate applies the trail's migrations (sqlitedb.Migrate, in one write
// transaction) keeping the triggers and indexes a user made on its
// tables. Migration 05 rebuilds memvault_audit_pending (DROP TABLE of the
// old one), which drops every trigger and index on it: before session 39
// a trigger an operator had made there (or a UNIQUE index standing for a
// constraint) was gone after the upgrade. The triggers and indexes on the
// trail's tables are read first, in the same transaction, and those the
// steps dropped are made again from their text on the new table — every
// one but memvault's own (ownTriggerPrefix), which the steps drop by name
// when they mean to. A kept trigger that does not compile on the new
// table (NEW.rowid: the table has no row ids now) would fail every write
// there, the trail's records among them: it fails the migration instead,
// naming it, and nothing is changed — drop or adapt it, and open again.
func migrate(ctx context.Context, db *sqlitedb.DB) error {
	return db.Write(ctx, func(tx *sql.Tx) error {
		before, err := userTriggers(ctx, tx)
		if err != nil {
			return err
		}
		// Migration 05 renames its copy of the pending table after
		// dropping the old one, and SQLite's rename checks every view and
		// trigger of the schema: one naming memvault_audit_pending (a
		// user's trigger on memvault_audit, a view) failed the rename,
		// so every Open ("no such table"). Legacy renaming checks nothing,
		// and those name the new table once it is renamed (no view or
		// trigger names the copy's name, to be rewritten).
		if _, err := tx.ExecContext(ctx, `PRAGMA legacy_alter_table = ON`); err != nil {
			return err
		}
		err = sqlitedb.MigrateTx(ctx, tx, "audit", migrations)
		if _, rerr := tx.ExecContext(ctx, `PRAGMA legacy_alter_table = OFF`); err == nil {
			err = rerr
		}
		if err != nil {
			return err
		}
		after, err := userTriggers(ctx, tx)
		if err != nil {
			return err
		}
		for _, tr := range before {
			if slices.Contains(after, tr) {
				continue
			}
			if _, err := tx.ExecContext(ctx, tr[1]); err != nil {
				return fmt.Errorf("migrate audit: keep %s %q on %s: %w", tr[3], tr[0], tr[2], err)
			}
			if tr[3] != "trigger" {
				continue
			}
			if err := compileWrites(ctx, tx, tr[2]); err != nil {
				return fmt.Errorf("migrate audit: trigger %q does not compile on the new %s: %w", tr[0], tr[2], err)
			}
		}
		return nil
	})
}

// compileWrites prepares, without running them, an insert, an update of
// every column and a delete of table: preparing a statement compiles the
// table's triggers it fires, so a trigger naming what the table lacks
// fails here, not in a later write.
func compileWrites(ctx context.Context, tx *sql.Tx, table string) error {
	q := `"` + strings.ReplaceAll(table, `"`, `""`) + `"`
	var set []string
	rows, err := tx.QueryContext(ctx, `SELECT name FROM pragma_table_info(?)`, table)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return err
		}
		c = `"` + strings.ReplaceAll(c, `"`, `""`) + `"`
		set = append(set, c+" = "+c)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, stmt := range []string{`INSERT INTO ` + q + ` DEFAULT VALUES`, `UPDATE ` + q + ` SET ` + strings.Join(set, ", "), `DELETE FROM ` + q} {
		st, err := tx.PrepareContext(ctx, stmt)
		if err != nil {
			return err
		}
		st.Close()
	}
	return nil
}

// userTriggers returns the name, text, table and type ("trigger" or
// "index") of the triggers and indexes on the trail's tables not named as
// memvault's (ownTriggerPrefix), in the order they were made; not the
// indexes SQLite makes for a table's own constraints (no text).
func userTriggers(ctx context.Context, tx *sql.Tx) ([][4]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT name, sql, tbl_name, type FROM sqlite_schema
WHERE type IN ('trigger', 'index') AND sql IS NOT NULL AND lower(tbl_name) IN ('memvault_audit', 'memvault_audit_pending')
AND lower(substr(name, 1, ?)) <> ? ORDER BY rowid`, len(ownTriggerPrefix), ownTriggerPrefix)
	if err != nil {
		return nil, fmt.Errorf("migrate audit: triggers: %w", err)
	}
	defer rows.Close()
	var out [][4]string
	for rows.Next() {
		var tr [4]string
		if err := rows.Scan(&tr[0], &tr[1], &tr[2], &tr[3]); err != nil {
			return nil, fmt.Errorf("migrate audit: triggers: %w", err)
		}
		out = append(out, tr)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("migrate audit: triggers: %w", err)
	}
	return out, nil
}

// Close closes the table's database handle.
func (t *Table) Close() error {
	t.stmts.Close()
	return t.db.Close()
}

// Append implements audit.Table in one write transaction (SQLite runs one
// at a time, across processes too).
func (t *Table) Append(ctx context.Context, chain func(*audit.Record) ([]audit.Record, error)) error {
	return t.append(ctx, func(_ *sql.Tx, last *audit.Record) ([]audit.Record, error) { return chain(last) })
}

// append runs one write transaction: it reads the last record, calls
// chain, and stores the records chain returns.
func (t *Table) append(ctx context.Context, chain func(*sql.Tx, *audit.Record) ([]audit.Record, error)) error {
	t.stmts.Prepare(ctx, t.db.Writer(), sqlInsert)
	err := t.db.Write(ctx, func(tx *sql.Tx) error {
		var last *audit.Record
		var r audit.Record
		err := tx.QueryRowContext(ctx, `SELECT seq, link, mac FROM memvault_audit ORDER BY seq DESC LIMIT 1`).Scan(&r.Seq, &r.Link, &r.MAC)
		switch {
		case err == nil:
			last = &r
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		rs, err := chain(tx, last)
		if err != nil {
			return err
		}
		if len(rs) == 0 {
			return nil
		}
		// One row per batchrow.Split row: a batch of reads' records is one.
		for _, row := range batchrow.Split(rs) {
			r := &row[len(row)-1]
			var more any
			if m := batchrow.More(row); m != "" {
				more = m
			}
			if _, err := t.stmts.Exec(ctx, tx, sqlInsert, r.Seq, r.Time.UTC().Format(time.RFC3339Nano), r.Principal, r.Op, r.Target, r.Subject, r.KeyID, r.Link, r.MAC,
				pendingIDValue(row[0].PendingID), more); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("audit/sqliteaudit: %w", err)
	}
	return nil
}

// pendingColumns are the pending table's columns, in Pending's order.
var pendingColumns = []string{"id", "at", "principal", "op", "target", "subject", "key_id", "mac"}

// pendingSelect reads pending rows p, each with the sequence number of the
// chained record that holds its id (0: none; memvault_audit's unique
// index on pending_id makes it one lookup).
const pendingSelect = `SELECT p.id, p.at, p.principal, p.op, p.target, p.subject, p.key_id, p.mac, coalesce(a.seq, 0), p.more
FROM memvault_audit_pending p LEFT JOIN memvault_audit a ON a.pending_id = p.id`

// pendingValues is p's row, in pendingColumns' order.
func pendingValues(p audit.Pending) []any {
	return []any{p.ID, p.Time.UTC().Format(time.RFC3339Nano), p.Principal, p.Op, p.Target, p.Subject, p.KeyID, p.MAC}
}

// AddPending implements audit.PendingTable in one write transaction. A
// pending record holding a batch (Pending.More) is one row.
func (t *Table) AddPending(ctx context.Context, ps []audit.Pending) error {
	t.stmts.Prepare(ctx, t.db.Writer(), sqlInsertPending)
	err := t.db.Write(ctx, func(tx *sql.Tx) error {
		for i := range ps {
			var more any
			if m := batchrow.PendingMore(&ps[i]); m != "" {
				more = m
			}
			if _, err := t.stmts.Exec(ctx, tx, sqlInsertPending, append(pendingValues(ps[i]), more)...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("audit/sqliteaudit: pending records: %w", err)
	}
	return nil
}

// PendingRow implements audit.PendingTable: the row a write of the data
// file inserts, when the trail lives in that file.
func (t *Table) PendingRow(p audit.Pending) *checkpointer.RecordRow {
	return &checkpointer.RecordRow{Table: "memvault_audit_pending", Columns: pendingColumns, Values: pendingValues(p)}
}

// scanPending reads the rows of pendingSelect.
func scanPending(rows *sql.Rows) ([]audit.Pending, error) {
	defer rows.Close()
	var out []audit.Pending
	for rows.Next() {
		var p audit.Pending
		var at string
		var more sql.NullString
		if err := rows.Scan(&p.ID, &at, &p.Principal, &p.Op, &p.Target, &p.Subject, &p.KeyID, &p.MAC, &p.Chained, &more); err != nil {
			return nil, err
		}
		batchrow.ExpandPending(&p, more.String)
		tm, err := time.Parse(time.RFC3339Nano, at)
		if err != nil {
			return nil, fmt.Errorf("%s: bad %s", idlimit.Name("pending record", p.ID), idlimit.Name("time", at))
		}
		p.Time = tm.UTC()
		out = append(out, p)
	}
	return out, rows.Err()
}

// AppendPending implements audit.PendingTable in one write transaction,
// as Append. The pending table has no index on (time, id), unlike
// PostgreSQL's: it holds the records of the last few milliseconds
// (records are not made while chaining fails), and a deleted row leaves
// no dead tuple to scan, whereas such an index costs every audited put
// one more page in the WAL (measured: 43 744 against 38 937 bytes written
// per put). So the table is read whole, in its key's order, and sorted
// here by time, then id (pendingOrder); only a table holding more than
// limit rows is sorted by SQLite, to pick the oldest limit. Sorting there
// computed julianday of every row's time text, and was the chainer's
// largest cost: ~12 µs an audited put_writes at 16 in flight
// (BenchmarkAuditedOps). The chained rows are deleted by one statement.
func (t *Table) AppendPending(ctx context.Context, limit int, chain func(*audit.Record, []audit.Pending) ([]audit.Record, error)) error {
	t.stmts.Prepare(ctx, t.db.Writer(), sqlDeletePendings)
	return t.append(ctx, func(tx *sql.Tx, last *audit.Record) ([]audit.Record, error) {
		pending, err := queryPending(ctx, tx, pendingSelect+` LIMIT ?`, limit+1)
		if err != nil {
			return nil, err
		}
		if len(pending) > limit {
			pending, err = queryPending(ctx, tx, pendingSelect+` ORDER BY julianday(p.at), p.id LIMIT ?`, limit)
			if err != nil {
				return nil, err
			}
		} else {
			slices.SortFunc(pending, pendingOrder)
		}
		rs, err := chain(last, pending)
		if err != nil {
			return nil, err
		}
		if len(pending) > 0 {
			ids := make([]string, len(pending))
			for i := range pending {
				ids[i] = pending[i].ID
			}
			list, err := json.Marshal(ids)
			if err != nil {
				return nil, err
			}
			if _, err := t.stmts.Exec(ctx, tx, sqlDeletePendings, string(list)); err != nil {
				return nil, err
			}
		}
		return rs, nil
	})
}

// queryPending runs q, a pendingSelect, and reads its rows.
func queryPending(ctx context.Context, tx *sql.Tx, q string, args ...any) ([]audit.Pending, error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return scanPending(rows)
}

// pendingOrder orders pending records oldest first: by time, then id (as
// PagePending, whose julianday ties times less than ~40 µs apart and
// then orders by id alone).
func pendingOrder(a, b audit.Pending) int {
	if c := a.Time.Compare(b.Time); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// PagePending implements audit.PendingTable.
func (t *Table) PagePending(ctx context.Context, afterTime time.Time, afterID string, limit int) ([]audit.Pending, error) {
	var out []audit.Pending
	err := t.db.Read(ctx, func(tx *sql.Tx) error {
		after := ""
		if !afterTime.IsZero() {
			after = afterTime.UTC().Format(time.RFC3339Nano)
		}
		// Times are stored as RFC 3339 text with varying fractions: order
		// and compare them as the julian day, then by id.
		rows, err := tx.QueryContext(ctx, pendingSelect+` WHERE ? = '' OR (julianday(p.at), p.id) > (julianday(?), ?) ORDER BY julianday(p.at), p.id LIMIT ?`,
			after, after, afterID, limit)
		if err != nil {
			return err
		}
		out, err = scanPending(rows)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("audit/sqliteaudit: %w", err)
	}
	return out, nil
}

// pendingIDValue is the pending_id column's value of a record whose
// PendingID is id: NULL for none, so that the unique index on it lets
// every record appended directly have none.
func pendingIDValue(id string) any {
	if id == "" {
		return nil
	}
	return id
}

// scan reads the records of a row of columns (batchrow.Expand).
func scan(row interface{ Scan(...any) error }) ([]audit.Record, error) {
	var r audit.Record
	var at string
	var pending, more sql.NullString
	if err := row.Scan(&r.Seq, &at, &r.Principal, &r.Op, &r.Target, &r.Subject, &r.KeyID, &r.Link, &r.MAC, &pending, &more); err != nil {
		return nil, err
	}
	r.PendingID = pending.String
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return nil, fmt.Errorf("record %d: bad %s", r.Seq, idlimit.Name("time", at))
	}
	r.Time = t
	return batchrow.Expand(r, more.String)
}

// Page implements audit.Table. A row is keyed by its last record's
// sequence number, so the rows after after hold every record after it;
// those of the first row up to after, and those past limit, are dropped.
func (t *Table) Page(ctx context.Context, after int64, limit int) ([]audit.Record, error) {
	var out []audit.Record
	err := t.db.Read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+columns+` FROM memvault_audit WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for len(out) < limit && rows.Next() {
			rs, err := scan(rows)
			if err != nil {
				return err
			}
			for _, r := range rs {
				if r.Seq > after && len(out) < limit {
					out = append(out, r)
				}
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("audit/sqliteaudit: %w", err)
	}
	return out, nil
}

// metaMigrations create memvault_meta in a data database: memvault's facts
// about the database itself, such as its id.
var metaMigrations = sqlitedb.MustLoad(migrationFiles, "migrations/meta")

// DatabaseID returns the id of the SQLite data database at path (the file
// the checkpointer and the store use, not the trail's): 32 random hex
// digits, created the first time in its memvault_meta table and never
// changed. A trail bound to it (audit.Options.DatabaseID) verifies next to
// this database only, and a copy of the file keeps it.
func DatabaseID(ctx context.Context, path string) (string, error) {
	db, err := sqlitedb.Open(path, sqlitedb.Options{})
	if err != nil {
		return "", fmt.Errorf("audit/sqliteaudit: database id: %w", err)
	}
	defer db.Close()
	id, err := readID(ctx, db)
	if err == nil {
		return id, nil
	}
	if err := db.Migrate(ctx, "meta", metaMigrations); err != nil {
		return "", fmt.Errorf("audit/sqliteaudit: database id: %w", err)
	}
	fresh := make([]byte, 16)
	_, _ = rand.Read(fresh)
	err = db.Write(ctx, func(tx *sql.Tx) error {
		// Under the write lock: of two processes creating the id at
		// once, the first wins and both read its id.
		_, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO memvault_meta (name, value) VALUES ('database_id', ?)`, hex.EncodeToString(fresh))
		return err
	})
	if err != nil {
		return "", fmt.Errorf("audit/sqliteaudit: database id: %w", err)
	}
	if id, err = readID(ctx, db); err != nil {
		return "", fmt.Errorf("audit/sqliteaudit: database id: %w", err)
	}
	return id, nil
}

func readID(ctx context.Context, db *sqlitedb.DB) (string, error) {
	var id string
	err := db.Read(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT value FROM memvault_meta WHERE name = 'database_id'`).Scan(&id)
	})
	return id, err
}

// chainRow is the memvault_meta row that records that the trail's hash
// chain (audit format 2) began; its value is the format.
const chainRow = "audit_chain"

// Meta returns the audit.Meta of the SQLite data database at path (the
// file the checkpointer and the store use, not the trail's): a row of its
// memvault_meta table, next to the database id, that whoever can write
// only the trail cannot remove. Each call opens the file; a trail reads it
// when it verifies and until its first append, and marks it once.
func Meta(path string) audit.Meta { return meta{path} }

type meta struct{ path string }

// ChainBegan implements audit.Meta. It only reads: a database without a
// memvault_meta table has no trail that began (vault.Open asks it of every
// database, audited or not, and must not add a table to one that is not).
func (m meta) ChainBegan(ctx context.Context) (bool, error) { return m.Marked(ctx, chainRow) }

// MarkChainBegan implements audit.Meta.
func (m meta) MarkChainBegan(ctx context.Context) error { return m.Mark(ctx, chainRow, "2") }

// Marked reports whether the data database's memvault_meta table holds
// the row name (a mark such as the audit chain's beginning). It only
// reads: a database without the table holds no mark.
func (m meta) Marked(ctx context.Context, name string) (bool, error) {
	_, ok, err := m.MarkValue(ctx, name)
	return ok, err
}

// MarkValue returns the value of the mark name, and whether the data
// database holds it. It only reads.
func (m meta) MarkValue(ctx context.Context, name string) (string, bool, error) {
	var value sql.NullString
	err := m.read(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT value FROM memvault_meta WHERE name = ?`, name).Scan(&value)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		return err
	})
	return value.String, value.Valid, err
}

// read runs fn in a read transaction of the data database when it has a
// memvault_meta table; it creates nothing (a database without the table
// holds no mark).
func (m meta) read(ctx context.Context, fn func(*sql.Tx) error) error {
	db, err := sqlitedb.Open(m.path, sqlitedb.Options{})
	if err != nil {
		return fmt.Errorf("audit/sqliteaudit: meta: %w", err)
	}
	defer db.Close()
	err = db.Read(ctx, func(tx *sql.Tx) error {
		var tables int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'memvault_meta'`).Scan(&tables); err != nil || tables == 0 {
			return err
		}
		return fn(tx)
	})
	if err != nil {
		return fmt.Errorf("audit/sqliteaudit: meta: %w", err)
	}
	return nil
}

// Mark records, for good, the row name with value in the data database's
// memvault_meta table (a row already there keeps its value).
func (m meta) Mark(ctx context.Context, name, value string) error {
	return m.do(ctx, func(db *sqlitedb.DB) error {
		return db.Write(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO memvault_meta (name, value) VALUES (?, ?)`, name, value)
			return err
		})
	})
}

// AdvanceMark records the count n under the row name of the data
// database's memvault_meta table, unless the row holds a greater count
// already: a mark that only grows (the key table's erasures, see vault).
// A row whose value is not a count (keys.ParseMarkCount) is replaced.
func (m meta) AdvanceMark(ctx context.Context, name string, n int64) error {
	return m.do(ctx, func(db *sqlitedb.DB) error {
		return db.Write(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO memvault_meta (name, value) VALUES (?, ?)
	ON CONFLICT (name) DO UPDATE SET value = excluded.value WHERE CAST(value AS INTEGER) < CAST(excluded.value AS INTEGER) OR `+notACount, name, strconv.FormatInt(n, 10))
			return err
		})
	})
}

// MarkErasure records n, the number of an erasure of subject that begins,
// under keys.ErasedSubjectMark(subject), unless it holds a greater one. The
// database's write lock orders it with every write: a write that read the
// guard before (ErasureGuard) commits before it, and one after it is
// refused.
func (m meta) MarkErasure(ctx context.Context, subject string, n int64) error {
	return m.AdvanceMark(ctx, keys.ErasedSubjectMark(subject), n)
}

// ErasureGuard is the data database's erasure guard (keys.ErasureGuard) on
// SQLite: writes run its statement (GuardSQL) in their transaction,
// holding the database's write lock, which MarkErasure takes too.
type ErasureGuard struct {
	db   *sqlitedb.DB
	stmt *sql.Stmt
}

// OpenErasureGuard returns the erasure guard of the data database at path,
// its memvault_meta table created. Close it when done.
func OpenErasureGuard(ctx context.Context, path string) (*ErasureGuard, error) {
	db, err := sqlitedb.Open(path, sqlitedb.Options{})
	if err != nil {
		return nil, fmt.Errorf("audit/sqliteaudit: erasure guard: %w", err)
	}
	if err := db.Migrate(ctx, "meta", metaMigrations); err != nil {
		db.Close()
		return nil, fmt.Errorf("audit/sqliteaudit: erasure guard: %w", err)
	}
	// ErasedPast reads on the reader pool (a read after the write lock
	// was taken sees every commit before it); writes run GuardSQL in
	// their transaction, prepared here on the writer pool, which the
	// database's savers and stores share (sqlitedb: one pair of pools per
	// file).
	stmt, err := db.Reader().PrepareContext(ctx, erasureGuardSQL)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("audit/sqliteaudit: erasure guard: %w", err)
	}
	if err := sqlfence.Prepare(ctx, db.Writer(), erasureGuardSQL); err != nil {
		_ = stmt.Close()
		db.Close()
		return nil, fmt.Errorf("audit/sqliteaudit: erasure guard: %w", err)
	}
	return &ErasureGuard{db: db, stmt: stmt}, nil
}

// ErasedPast reports whether the row keys.ErasedSubjectMark(subject) holds a
// number greater than known (keys.ErasureGuard).
func (g *ErasureGuard) ErasedPast(ctx context.Context, subject string, known int64) (bool, error) {
	var past bool
	if err := g.stmt.QueryRowContext(ctx, subject, known).Scan(&past); err != nil {
		return false, fmt.Errorf("audit/sqliteaudit: erasure guard: %w", err)
	}
	return past, nil
}

// GuardSQL implements keys.ErasureGuard: a query of one boolean, true
// when the row keys.ErasedSubjectMark(subject) holds a number greater than
// known (a primary-key probe), which SQLite's drivers run in the write's
// transaction (internal/sqlfence) and refuse the write on true.
func (g *ErasureGuard) GuardSQL() string { return erasureGuardSQL }

// erasureGuardSQL is GuardSQL's statement; its parameters are the subject
// and the count of erasures of the writer's key table.
// A mark that is not a count refuses (keys.ErasedPastMark): SQLite's
// CAST reads "one" as 0, so the value must also read back as itself.
const erasureGuardSQL = `SELECT EXISTS (SELECT 1 FROM memvault_meta WHERE name = '` + keys.ErasedSubjectPrefix + `' || ? AND (CAST(value AS INTEGER) > ? OR ` + notACount + `))`

// notACount is true of a memvault_meta value that is not a count as
// keys.ParseMarkCount reads one (SQLite's integers hold 19 digits; the
// marks' writers never write more than 18).
const notACount = `CAST(CAST(value AS INTEGER) AS TEXT) IS NOT value OR length(value) > 18 OR CAST(value AS INTEGER) < 0`

// Close releases the guard's handle on the database.
func (g *ErasureGuard) Close() error {
	sqlfence.Unprepare(g.db.Writer(), erasureGuardSQL)
	_ = g.stmt.Close()
	return g.db.Close()
}

// do runs fn on the data database, its memvault_meta table created.
func (m meta) do(ctx context.Context, fn func(*sqlitedb.DB) error) error {
	db, err := sqlitedb.Open(m.path, sqlitedb.Options{})
	if err != nil {
		return fmt.Errorf("audit/sqliteaudit: meta: %w", err)
	}
	defer db.Close()
	if err := db.Migrate(ctx, "meta", metaMigrations); err != nil {
		return fmt.Errorf("audit/sqliteaudit: meta: %w", err)
	}
	if err := fn(db); err != nil {
		return fmt.Errorf("audit/sqliteaudit: meta: %w", err)
	}
	return nil
}
