package rotate

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/memvault/memvault/internal/sqlexec"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/reencrypt"
)

// Sealer reseals one stored value where it lives (binding.Codec
// implements it, under the row's subject's keys when there is one).
type Sealer interface {
	Reencrypt(ctx context.Context, r Row) (string, []byte, bool, error)
}

// ErrNotEncrypted is reencrypt.ErrNotEncrypted, returned when the
// backend's serializer cannot re-encrypt (encryption is off).
var ErrNotEncrypted = reencrypt.ErrNotEncrypted

// Row is one stored value: its primary key (in the order the backend's
// keyset query compares it), type tag, payload and associated data.
type Row struct {
	Key  []any
	Typ  string
	Data []byte
	AAD  []byte
	// At is where the value lives (a binding.Location), for sealers that
	// key by location: a data subject's values are resealed under the
	// subject's keys.
	At any
}

// Change is a row to rewrite: the old value (for a compare-and-swap update
// that leaves rows written meanwhile alone) and the new one.
type Change struct {
	Row
	NewTyp  string
	NewData []byte
}

// Table is one table of value rows.
type Table struct {
	// Name is used in error messages.
	Name string
	// Count returns how many rows Fetch will visit (for progress).
	Count func(ctx context.Context) (int64, error)
	// Fetch returns up to limit rows whose key sorts after after (nil: from
	// the start), in key order.
	Fetch func(ctx context.Context, after []any, limit int) ([]Row, error)
	// Update writes the changes in one transaction.
	Update func(ctx context.Context, changes []Change) error
}

// MaxPasses bounds how many times Run scans the tables. The first pass
// reseals what is under old keys; each further pass checks that nothing
// under an old key appeared meanwhile (a process still writing with the old
// primary key writes such rows, and the compare-and-swap update leaves rows
// changed between read and write alone) and reseals what did.
const MaxPasses = 4

// ErrRowsRemain is returned when rows under old keys kept appearing for
// MaxPasses passes: some process still writes with an old primary key.
var ErrRowsRemain = errors.New("reencrypt: rows under old keys keep appearing (a process still writes with an old primary key: restart it with the new key, then run again; do not retire the old key yet)")

// Run reseals every value of tables with s, pass after pass, until a pass
// after the first finds nothing left to reseal — so that on success no row
// under an old key remains, including rows written while the run went on —
// or MaxPasses passes have run, when it returns ErrRowsRemain with how many
// rows the last pass found, by table. Every run thus reads the tables at
// least twice. A dry run makes one pass and writes nothing.
func Run(ctx context.Context, s Sealer, opt reencrypt.Options, tables ...Table) (reencrypt.Stats, error) {
	var stats reencrypt.Stats
	var total int64
	for _, t := range tables {
		n, err := t.Count(ctx)
		if err != nil {
			return stats, fmt.Errorf("reencrypt %s: %w", t.Name, err)
		}
		total += n
	}
	var progressed int64 // rows read by every pass so far, for Progress
	var erased erasedRows
	for pass := 1; ; pass++ {
		found, err := runPass(ctx, s, opt, tables, &stats, &progressed, total, pass == 1, &erased)
		if err != nil {
			return stats, err
		}
		if opt.DryRun {
			return stats, erased.err()
		}
		var n int64
		var where []string
		for i, t := range tables {
			if found[i] > 0 {
				n += found[i]
				where = append(where, fmt.Sprintf("%s: %d", t.Name, found[i]))
			}
		}
		// A pass that found nothing proves the tables clean only if it is
		// not the first: the first races with whatever was written behind
		// its cursor while it ran, which only a later pass can see.
		if n == 0 && pass > 1 {
			return stats, erased.err()
		}
		if pass == MaxPasses {
			return stats, fmt.Errorf("%w: pass %d of %d still found %d (%s)", ErrRowsRemain, pass, MaxPasses, n, strings.Join(where, ", "))
		}
		total += stats.Scanned // progress: another full scan follows
	}
}

// runPass scans every table once, resealing what needs it; found counts,
// per table, the rows that needed it.
func runPass(ctx context.Context, s Sealer, opt reencrypt.Options, tables []Table, stats *reencrypt.Stats, progressed *int64, total int64, first bool, erased *erasedRows) ([]int64, error) {
	batch := opt.BatchSize
	if batch <= 0 {
		batch = 500
	}
	found := make([]int64, len(tables))
	for i, t := range tables {
		var after []any
		for {
			rows, err := t.Fetch(ctx, after, batch)
			if err != nil {
				return found, fmt.Errorf("reencrypt %s: %w", t.Name, err)
			}
			if len(rows) == 0 {
				break
			}
			var changes []Change
			for _, r := range rows {
				nt, nd, changed, err := s.Reencrypt(ctx, r)
				if errors.Is(err, keys.ErrSubjectErased) {
					// Nothing opens it, so nothing can reseal it: it is
					// left, and the run goes on with every other row.
					if first {
						erased.add(t.Name, r.Key, err)
					}
					continue
				}
				if err != nil {
					return found, fmt.Errorf("reencrypt %s row %v: %w", t.Name, r.Key, err)
				}
				if changed {
					changes = append(changes, Change{Row: r, NewTyp: nt, NewData: nd})
				}
			}
			if len(changes) > 0 && !opt.DryRun {
				if err := t.Update(ctx, changes); err != nil {
					return found, fmt.Errorf("reencrypt %s: %w", t.Name, err)
				}
			}
			found[i] += int64(len(changes))
			if first {
				stats.Scanned += int64(len(rows)) // the rows there are, counted once
			}
			*progressed += int64(len(rows))
			stats.Rewritten += int64(len(changes))
			if opt.Progress != nil {
				opt.Progress(*progressed, max(total, *progressed))
			}
			after = rows[len(rows)-1].Key
			if len(rows) < batch {
				break
			}
		}
	}
	return found, nil
}

// erasedRows counts the rows a run left because their subject was erased
// (their keys destroyed): rows of a data backup restored after the
// erasure, or of a forget killed before it deleted them. Before, the first
// such row stopped the run, leaving every other subject's rows under the
// old key.
type erasedRows struct {
	n     int64
	first string // the first row's table and key, and why, for the error
}

func (e *erasedRows) add(table string, key []any, err error) {
	if e.n == 0 {
		// The key's text and numbers name the row; a []byte in it (the
		// stored ciphertext, in some tables' keys) is left out.
		var ids []any
		for _, k := range key {
			if _, ok := k.([]byte); !ok {
				ids = append(ids, k)
			}
		}
		e.first = fmt.Sprintf("%s row %q: %v", table, ids, err)
	}
	e.n++
}

// err is nil when no row was left, else an error wrapping
// keys.ErrSubjectErased that says what to do.
func (e *erasedRows) err() error {
	if e.n == 0 {
		return nil
	}
	return fmt.Errorf("%w: %d row(s) of erased subjects were left as they are, sealed under their destroyed keys (a data backup restored after their erasure, or a forget that did not finish); every other row was resealed. Run `memvault forget` for each such subject again to delete them, then run this again (first: %s)", keys.ErrSubjectErased, e.n, e.first)
}

// Compact ends a run on db that was not a dry run: a database whose file
// keeps images of rewritten rows (sqlexec.Compacter: SQLite) is compacted,
// unless opt defers it. A failure wraps reencrypt.ErrCompactPending:
// the rows are resealed, their old images not yet gone.
func Compact(ctx context.Context, opt reencrypt.Options, db sqlexec.DB) error {
	c, ok := db.(sqlexec.Compacter)
	if !ok || opt.DryRun || opt.DeferCompaction {
		return nil
	}
	if err := c.Compact(ctx); err != nil {
		return fmt.Errorf("%w: %w", reencrypt.ErrCompactPending, err)
	}
	return nil
}

// SQLTable describes a table of value rows in SQL, for SQL: the Table
// that pages through it is built from this one description on every SQL
// database (see package sqlexec), so the keyset paging and the
// compare-and-swap update are written once.
type SQLTable struct {
	// Name is the table as SQL names it (schema-qualified where needed);
	// Label names it in errors.
	Name, Label string
	// Keys are the primary key columns in keyset order, and Start a key
	// that sorts before every stored one.
	Keys  []string
	Start []any
	// Columns is the select list; Scan reads one row of it into a Row whose
	// Key holds the Keys' values (then any compare-and-swap values).
	Columns string
	Scan    func(scan func(dest ...any) error) (Row, error)
	// Where, when set, restricts the rows visited (an SQL condition).
	Where string
	// Update is the compare-and-swap statement that rewrites one row: it
	// changes the row only if it still holds the value that was read.
	Update func(c Change) sqlexec.Stmt
}

// Table is the paging Table of t on db.
func (t SQLTable) Table(db sqlexec.DB) Table {
	where := ""
	if t.Where != "" {
		where = " WHERE " + t.Where
	}
	keys := strings.Join(t.Keys, ", ")
	params := strings.TrimSuffix(strings.Repeat("?, ", len(t.Keys)), ", ")
	and := " WHERE "
	if t.Where != "" {
		and = " WHERE " + t.Where + " AND "
	}
	fetch := "SELECT " + t.Columns + " FROM " + t.Name + and + "(" + keys + ") > (" + params + ") ORDER BY " + keys + " LIMIT ?"
	return Table{
		Name: t.Label,
		Count: func(ctx context.Context) (n int64, err error) {
			err = db.Query(ctx, "SELECT count(*) FROM "+t.Name+where, nil, func(scan func(...any) error) error {
				return scan(&n)
			})
			return n, err
		},
		Fetch: func(ctx context.Context, after []any, limit int) ([]Row, error) {
			if after == nil {
				after = t.Start
			}
			var out []Row
			err := db.Query(ctx, fetch, append(after[:len(t.Keys):len(t.Keys)], limit), func(scan func(...any) error) error {
				r, err := t.Scan(scan)
				if err != nil {
					return err
				}
				out = append(out, r)
				return nil
			})
			return out, err
		},
		Update: func(ctx context.Context, changes []Change) error {
			stmts := make([]sqlexec.Stmt, len(changes))
			for i, c := range changes {
				stmts[i] = t.Update(c)
			}
			return db.ExecTx(ctx, stmts)
		},
	}
}
