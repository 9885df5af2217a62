package sqlitesaver

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"iter"
	"strings"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/engine"
	"github.com/memvault/memvault/checkpointer/internal/sqlrows"
	"github.com/memvault/memvault/serde"
)

// pageSize is how many checkpoint rows List reads per read transaction.
const pageSize = 64

// row is a checkpoint row and the rows that go with it, read in one read
// transaction and opened by the engine after it ends.
type row = checkpointer.StoredCheckpoint

const rowColumns = `thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata`

func scanRows(rs *sql.Rows) ([]*row, error) {
	defer rs.Close()
	var out []*row
	for rs.Next() {
		r := &row{}
		var parent sql.NullString
		if err := rs.Scan(&r.Thread, &r.NS, &r.ID, &parent, &r.Doc, &r.Meta); err != nil {
			return nil, err
		}
		r.Parent = parent.String
		out = append(out, r)
	}
	return out, rs.Err()
}

type nsKey struct{ thread, ns string }

// fill reads the values, pending writes and (for v<4 checkpoints) pending
// sends of rows. The engine parses each document (for its channel
// versions) once; the result goes on with the row.
func fill(ctx context.Context, tx *sql.Tx, st *stmts, rows []*row) error {
	groups := map[nsKey][]*row{}
	var order []nsKey
	for _, r := range rows {
		dec, err := engine.DecodeDocument(r.Doc)
		if err != nil {
			return fmt.Errorf("checkpoint %s: %w", r.ID, err)
		}
		r.Decoded = dec
		k := nsKey{r.Thread, r.NS}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	for _, k := range order {
		if err := fillGroup(ctx, tx, st, k, groups[k]); err != nil {
			return err
		}
	}
	for _, r := range rows {
		if doc(r).V() >= 4 || r.Parent == "" {
			continue
		}
		rs, err := tx.StmtContext(ctx, st.sends).QueryContext(ctx, r.Thread, r.NS, r.Parent, checkpointer.ChannelTasks)
		if err != nil {
			return err
		}
		r.Sends, err = scanWrites(rs, nil)
		if err != nil {
			return err
		}
	}
	return nil
}

type chanVersion struct{ channel, version string }

func doc(r *row) *engine.Document { return r.Decoded.(*engine.Document) }

// fillGroup loads the values and writes of rows of one thread and namespace.
func fillGroup(ctx context.Context, tx *sql.Tx, st *stmts, k nsKey, rows []*row) error {
	// Values: one lookup per distinct (channel, version); unchanged channels
	// are shared by consecutive checkpoints.
	need := map[chanVersion]struct{}{}
	var pairs [][2]string
	for _, r := range rows {
		for ch, ver := range doc(r).ChannelVersions() {
			cv := chanVersion{ch, ver}
			if _, ok := need[cv]; !ok {
				need[cv] = struct{}{}
				pairs = append(pairs, [2]string{ch, ver})
			}
		}
	}
	if len(pairs) > 0 {
		keys, err := json.Marshal(pairs)
		if err != nil {
			return err
		}
		rs, err := tx.StmtContext(ctx, st.blobs).QueryContext(ctx, k.thread, k.ns, keys)
		if err != nil {
			return err
		}
		found := make(map[chanVersion]checkpointer.ValueRow, len(pairs))
		for rs.Next() {
			var b checkpointer.ValueRow
			if err := rs.Scan(&b.Channel, &b.Version, &b.Type, &b.Data); err != nil {
				rs.Close()
				return err
			}
			found[chanVersion{b.Channel, b.Version}] = b
		}
		if err := rs.Close(); err != nil {
			return err
		}
		if err := rs.Err(); err != nil {
			return err
		}
		for _, r := range rows {
			for ch, ver := range doc(r).ChannelVersions() {
				if b, ok := found[chanVersion{ch, ver}]; ok && b.Type != serde.TypeEmpty {
					r.Values = append(r.Values, b)
				}
			}
		}
	}

	// Pending writes, ordered (task_id, idx) per checkpoint.
	byID := make(map[string]*row, len(rows))
	ids := make([]string, 0, len(rows))
	for _, r := range rows {
		if _, ok := byID[r.ID]; !ok {
			ids = append(ids, r.ID)
		}
		byID[r.ID] = r
	}
	idList, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	rs, err := tx.StmtContext(ctx, st.writes).QueryContext(ctx, k.thread, k.ns, idList)
	if err != nil {
		return err
	}
	_, err = scanWrites(rs, byID)
	return err
}

// scanWrites reads write rows. With byID, rows start with checkpoint_id and
// are appended to their row's writes; otherwise they are returned.
func scanWrites(rs *sql.Rows, byID map[string]*row) ([]checkpointer.WriteRow, error) {
	defer rs.Close()
	var out []checkpointer.WriteRow
	for rs.Next() {
		var (
			w   checkpointer.WriteRow
			id  string
			typ sql.NullString
			err error
		)
		if byID != nil {
			err = rs.Scan(&id, &w.Task, &w.Idx, &w.Channel, &typ, &w.Data)
		} else {
			err = rs.Scan(&w.Task, &w.Idx, &w.Channel, &typ, &w.Data)
		}
		if err != nil {
			return nil, err
		}
		w.Type = typ.String
		if byID != nil {
			if r := byID[id]; r != nil {
				r.Writes = append(r.Writes, w)
			}
			continue
		}
		out = append(out, w)
	}
	return out, rs.Err()
}

// Load implements checkpointer.Driver: one read transaction, or, for a
// read carrying its audit record (checkpointer.ReadRecordOf), one write
// transaction that inserts the record and reads (recorded).
func (d *driver) Load(ctx context.Context, thread, ns, id string) (*checkpointer.StoredCheckpoint, error) {
	var r *row
	err := d.recorded(ctx, func(tx *sql.Tx, st *stmts) error {
		var (
			rs  *sql.Rows
			err error
		)
		if id != "" {
			rs, err = tx.StmtContext(ctx, st.byID).QueryContext(ctx, thread, ns, id)
		} else {
			rs, err = tx.StmtContext(ctx, st.latest).QueryContext(ctx, thread, ns)
		}
		if err != nil {
			return err
		}
		rows, err := scanRows(rs)
		if err != nil || len(rows) == 0 {
			return err
		}
		r = rows[0]
		return fill(ctx, tx, st, rows)
	})
	if err != nil {
		return nil, fmt.Errorf("get tuple: %w", err)
	}
	return r, nil
}

// Scan implements checkpointer.Driver. Rows are read in pages of 64 per
// read transaction and handed on as the consumer reaches them; no
// database connection is held while the consumer runs, so it may call the
// saver. A checkpoint put while the listing runs may or may not be seen.
// Scalar entries of q.Filter are evaluated in SQL; the engine checks the
// whole filter.
func (d *driver) Scan(ctx context.Context, q checkpointer.DriverQuery) iter.Seq2[*checkpointer.StoredCheckpoint, error] {
	return func(yield func(*checkpointer.StoredCheckpoint, error) bool) {
		where, args := listWhere(q)
		var last *row
		yielded := 0
		if r := checkpointer.ReadRecordOf(ctx); r != nil {
			if q.Limit > 0 && q.Limit <= checkpointer.MaxRecordedScan {
				// The record and the page (every row q selects) in
				// one write transaction; the rows are handed on once it
				// committed.
				var page []*row
				err := d.recorded(ctx, func(tx *sql.Tx, st *stmts) (err error) {
					page, err = readPage(ctx, tx, st, listSQL(where, false), append(args[:len(args):len(args)], q.Limit))
					return err
				})
				if err != nil {
					yield(nil, fmt.Errorf("list: %w", err))
					return
				}
				for _, r := range page {
					if !yield(r, nil) {
						return
					}
				}
				return
			}
			// Too many rows to hold until a commit: the record commits
			// first, by itself.
			if err := d.recorded(ctx, func(*sql.Tx, *stmts) error { return nil }); err != nil {
				yield(nil, fmt.Errorf("list: %w", err))
				return
			}
		}
		for {
			if err := ctx.Err(); err != nil {
				yield(nil, fmt.Errorf("list: %w", err))
				return
			}
			n := pageSize
			if q.Limit > 0 {
				n = min(n, q.Limit-yielded)
			}
			query := listSQL(where, last != nil)
			qargs := args
			if last != nil {
				qargs = append(qargs[:len(qargs):len(qargs)], last.ID, last.ID, last.ID, last.Thread, last.Thread, last.NS)
			}
			qargs = append(qargs[:len(qargs):len(qargs)], n)
			var page []*row
			err := d.db.Read(ctx, func(tx *sql.Tx) (err error) {
				page, err = readPage(ctx, tx, d.st, query, qargs)
				return err
			})
			if err != nil {
				yield(nil, fmt.Errorf("list: %w", err))
				return
			}
			for _, r := range page {
				if !yield(r, nil) {
					return
				}
				yielded++
			}
			if len(page) < n || (q.Limit > 0 && yielded >= q.Limit) {
				return
			}
			last = page[len(page)-1]
		}
	}
}

// readPage runs query, a listSQL statement, in tx and returns its rows
// with their values and writes (fill, through st: tx's pool's
// statements).
func readPage(ctx context.Context, tx *sql.Tx, st *stmts, query string, args []any) ([]*row, error) {
	rs, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	page, err := scanRows(rs)
	if err != nil {
		return nil, err
	}
	return page, fill(ctx, tx, st, page)
}

// recorded runs fn in a read transaction, or, when ctx carries a read's
// audit record (checkpointer.ReadRecordOf), in a write transaction that
// inserts the record first: one transaction and one commit for the read
// and its record, and fn's rows go to the caller only once it committed
// (a failed insert, or one its RecordRow.After let store no row, fails
// it before fn runs).
//
// fn is given the statements of tx's pool.
func (d *driver) recorded(ctx context.Context, fn func(tx *sql.Tx, st *stmts) error) error {
	r := checkpointer.ReadRecordOf(ctx)
	if r == nil {
		return d.db.Read(ctx, func(tx *sql.Tx) error { return fn(tx, d.st) })
	}
	d.st.prepareRecord(ctx, d.db.Writer(), r)
	return d.db.Write(ctx, func(tx *sql.Tx) error {
		res, err := d.st.records.Exec(ctx, tx, recordSQL(r), r.Args()...)
		if err != nil {
			return fmt.Errorf("audit record: %w", err)
		}
		if r.After != nil {
			// Its query may yield no row (the record it follows is gone):
			// then nothing is stored, and the read fails.
			if n, err := res.RowsAffected(); err != nil {
				return fmt.Errorf("audit record: %w", err)
			} else if n != 1 {
				return fmt.Errorf("audit record: %w", checkpointer.ErrRecordNotStored)
			}
		}
		return fn(tx, d.st.onWriter)
	})
}

// listWhere returns a Scan's conditions and their arguments: the scalar
// entries of the filter among them (a narrowing; the engine checks the
// whole filter).
func listWhere(q checkpointer.DriverQuery) (where []string, args []any) {
	where, args = sqlrows.Where(q)
	for k, v := range q.Filter {
		if cond, cargs, ok := pushdown(k, v); ok {
			where = append(where, cond)
			args = append(args, cargs...)
		}
	}
	return where, args
}

// listSQL is List's statement for the conditions where; paged continues
// after the last row of the previous page (its id, thread and namespace
// come after the conditions' arguments), then the page size.
func listSQL(where []string, paged bool) string {
	q := `SELECT ` + rowColumns + ` FROM checkpoints WHERE 1`
	for _, w := range where {
		q += " AND " + w
	}
	if paged {
		q += ` AND checkpoint_id <= ? AND (checkpoint_id < ? OR (checkpoint_id = ? AND (thread_id > ? OR (thread_id = ? AND checkpoint_ns > ?))))`
	}
	return q + ` ORDER BY checkpoint_id DESC, thread_id, checkpoint_ns LIMIT ?`
}

// pushdown returns an SQL condition selecting rows whose metadata has key k
// equal to the scalar v, or false when v is not a scalar SQL can compare
// exactly (objects and arrays are left to MetadataContains).
func pushdown(k string, v any) (string, []any, bool) {
	if strings.ContainsAny(k, "\"\\") {
		return "", nil, false
	}
	path := `$."` + k + `"`
	const num = `json_type(metadata, ?) IN ('integer', 'real') AND json_extract(metadata, ?) = ?`
	switch x := v.(type) {
	case nil:
		return `json_type(metadata, ?) = 'null'`, []any{path}, true
	case bool:
		t := "false"
		if x {
			t = "true"
		}
		return `json_type(metadata, ?) = ?`, []any{path, t}, true
	case string:
		return `json_type(metadata, ?) = 'text' AND json_extract(metadata, ?) = ?`, []any{path, path, x}, true
	case int:
		return num, []any{path, path, int64(x)}, true
	case int32:
		return num, []any{path, path, int64(x)}, true
	case int64:
		return num, []any{path, path, x}, true
	}
	return "", nil, false
}
