package sqlitesaver

import (
	"context"
	"database/sql"
	"encoding/json"
	"iter"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/internal/sqlrows"
	"github.com/memvault/memvault/internal/sqlfence"
	"github.com/memvault/memvault/internal/sqlitedb"
)

// driver is the SQLite checkpointer.Driver: LangGraph's three tables
// (checkpoints, checkpoint_blobs, checkpoint_writes), read through the
// reader pool and written in the database's one write transaction at a
// time, which serializes every write with Update.
type driver struct {
	db *sqlitedb.DB
	st *stmts
}

var _ checkpointer.Driver = (*driver)(nil)

// Name implements checkpointer.Driver.
func (*driver) Name() string { return "sqlite" }

// Capabilities implements checkpointer.Driver: scalar filters narrow the
// scan in SQL; the engine checks the rest. A write inserts its audit
// record in its transaction, and a read its own in a write transaction
// holding the read (ReadRecords).
func (*driver) Capabilities() checkpointer.DriverCapabilities {
	return checkpointer.DriverCapabilities{Serialized: true, TxRecords: true, ReadRecords: true}
}

// Threads implements checkpointer.Driver.
func (d *driver) Threads(ctx context.Context, after string, limit int) ([]string, error) {
	return sqlrows.Threads(ctx, query(d.db.Reader()), sqlrows.ThreadsSQL("checkpoints", "?", "?"), after, limit)
}

// RowThreads implements engine.RowThreads: one statement, a range scan of
// each table's primary key (sqlrows.RowThreadsSQL).
func (d *driver) RowThreads(ctx context.Context, after string, limit int) ([]string, error) {
	return sqlrows.Threads(ctx, query(d.db.Reader()),
		sqlrows.RowThreadsSQL([]string{"checkpoints", "checkpoint_blobs", "checkpoint_writes"}, "?1", "?2"), after, limit)
}

// ThreadInfos implements checkpointer.Driver in one aggregate query over
// the primary key.
func (d *driver) ThreadInfos(ctx context.Context) iter.Seq2[checkpointer.ThreadInfo, error] {
	return sqlrows.ThreadInfos(ctx, query(d.db.Reader()), sqlrows.ThreadInfosSQL("checkpoints"))
}

// Put implements checkpointer.Driver: one write transaction.
func (d *driver) Put(ctx context.Context, p *checkpointer.PutRows) error {
	d.st.prepareRecord(ctx, d.db.Writer(), p.Record)
	return d.db.Write(ctx, func(tx *sql.Tx) error { return (&sqlTx{d, tx}).Put(ctx, p) })
}

// PutWrites implements checkpointer.Driver: one write transaction.
func (d *driver) PutWrites(ctx context.Context, w *checkpointer.WriteRows) error {
	d.st.prepareRecord(ctx, d.db.Writer(), w.Record)
	return d.db.Write(ctx, func(tx *sql.Tx) error { return (&sqlTx{d, tx}).PutWrites(ctx, w) })
}

// Update implements checkpointer.Driver: fn runs in one write transaction.
func (d *driver) Update(ctx context.Context, fn func(checkpointer.DriverTx) error) error {
	return d.db.Write(ctx, func(tx *sql.Tx) error { return fn(&sqlTx{d, tx}) })
}

// sqlTx is a write transaction (checkpointer.DriverTx). Holding the
// database's write lock, nothing else writes until it ends: a removal's
// heads stay true until it commits.
type sqlTx struct {
	d  *driver
	tx *sql.Tx
}

// Put implements checkpointer.DriverTx. The value rows go first, the
// checkpoint row after them; a checkpoint that inherits from its parent is
// inserted only when the parent is stored, and otherwise the transaction
// is rolled back with the blob rows written before.
func (t *sqlTx) Put(ctx context.Context, p *checkpointer.PutRows) error {
	// Holding the write lock: an erasure's DrainWrites waits for it.
	if err := sqlfence.Run(ctx, t.tx, t.d.db.Writer(), []checkpointer.WriteFence{p.Fence}); err != nil {
		return err
	}
	if len(p.Values) > 0 {
		st := t.tx.StmtContext(ctx, t.d.st.putBlob)
		for _, b := range p.Values {
			if _, err := st.ExecContext(ctx, p.Thread, p.NS, b.Channel, b.Version, b.Type, b.Data); err != nil {
				return err
			}
		}
	}
	var parent any
	if p.Parent != "" {
		parent = p.Parent
	}
	if !p.NeedsParent {
		if _, err := t.tx.StmtContext(ctx, t.d.st.putCheckpoint).ExecContext(ctx, p.Thread, p.NS, p.ID, parent, p.Doc, p.Meta); err != nil {
			return err
		}
		return t.record(ctx, p.Record)
	}
	res, err := t.tx.StmtContext(ctx, t.d.st.putChild).ExecContext(ctx, p.Thread, p.NS, p.ID, parent, p.Doc, p.Meta)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return p.ErrParentMissing()
	}
	return t.record(ctx, p.Record)
}

// record inserts a write's audit record (nil: none) in its transaction,
// after its rows: the file's one commit makes both durable, and a write
// that fails rolls its record back.
func (t *sqlTx) record(ctx context.Context, r *checkpointer.RecordRow) error {
	if r == nil {
		return nil
	}
	_, err := t.d.st.records.Exec(ctx, t.tx, recordSQL(r), r.Args()...)
	return err
}

// PutWrites implements checkpointer.DriverTx.
func (t *sqlTx) PutWrites(ctx context.Context, w *checkpointer.WriteRows) error {
	if err := sqlfence.Run(ctx, t.tx, t.d.db.Writer(), []checkpointer.WriteFence{w.Fence}); err != nil {
		return err
	}
	stmt := t.d.st.insertWrite
	if w.Upsert {
		stmt = t.d.st.upsertWrite
	}
	st := t.tx.StmtContext(ctx, stmt)
	for _, r := range w.Rows {
		if _, err := st.ExecContext(ctx, w.Thread, w.NS, w.Checkpoint, w.Task, w.Path, r.Idx, r.Channel, r.Type, r.Data); err != nil {
			return err
		}
	}
	return t.record(ctx, w.Record)
}

// Fence implements checkpointer.DriverTx: the write lock is held.
func (t *sqlTx) Fence(ctx context.Context, f checkpointer.WriteFence) error {
	return sqlfence.Run(ctx, t.tx, t.d.db.Writer(), []checkpointer.WriteFence{f})
}

// inJSON is the set of values of a JSON array parameter: one search of
// the primary key per element.
const inJSON = `(SELECT value FROM json_each(?))`

// docV is the format version of a checkpoint document as the removal
// rules read it (only whether it is before 4): a number below 4 as an
// integer, anything else — no "v" included, the current format as the
// engine decodes it — 4, as the PostgreSQL driver's heads read it.
const docV = `CASE WHEN json_type(checkpoint, '$.v') IN ('integer', 'real') AND json_extract(checkpoint, '$.v') < 4
	THEN CAST(json_extract(checkpoint, '$.v') AS INTEGER) ELSE 4 END`

// Lock implements checkpointer.DriverTx: Update holds the only write
// lock, so there is nothing more to take (the engine does not ask).
func (t *sqlTx) Lock(ctx context.Context, _ []checkpointer.Removal, sel checkpointer.HeadSelector) ([]checkpointer.Head, error) {
	return t.Heads(ctx, sel)
}

// Heads implements checkpointer.DriverTx.
func (t *sqlTx) Heads(ctx context.Context, sel checkpointer.HeadSelector) ([]checkpointer.Head, error) {
	return heads(ctx, t.tx, sel)
}

// Heads implements checkpointer.Driver in a read transaction.
func (d *driver) Heads(ctx context.Context, sel checkpointer.HeadSelector) (hs []checkpointer.Head, err error) {
	err = d.db.Read(ctx, func(tx *sql.Tx) error { hs, err = heads(ctx, tx, sel); return err })
	return hs, err
}

// DeleteThreads implements checkpointer.Driver in one write transaction.
func (d *driver) DeleteThreads(ctx context.Context, threads []string) error {
	return d.Update(ctx, func(tx checkpointer.DriverTx) error {
		_, err := tx.DeleteThreads(ctx, threads, false)
		return err
	})
}

func heads(ctx context.Context, tx *sql.Tx, sel checkpointer.HeadSelector) ([]checkpointer.Head, error) {
	var where string
	var args []any
	switch {
	case len(sel.RunIDs) > 0:
		arg, err := json.Marshal(sel.RunIDs)
		if err != nil {
			return nil, err
		}
		// The expression matches checkpoints_run_id_idx.
		where = `(thread_id, checkpoint_ns) IN (SELECT thread_id, checkpoint_ns FROM checkpoints
			WHERE json_extract(metadata, '$.run_id') IN ` + inJSON + ` AND json_type(metadata, '$.run_id') = 'text')`
		args = []any{string(arg)}
	default:
		arg, err := json.Marshal(sel.Threads)
		if err != nil {
			return nil, err
		}
		where, args = `thread_id IN `+inJSON, []any{string(arg)}
		if sel.NS != nil {
			where += ` AND checkpoint_ns = ?`
			args = append(args, *sel.NS)
		}
	}
	rs, err := query(tx)(ctx, `SELECT thread_id, checkpoint_ns, checkpoint_id, 1, coalesce(parent_checkpoint_id, ''), `+docV+`,
			CASE json_type(metadata, '$.run_id') WHEN 'text' THEN json_extract(metadata, '$.run_id') ELSE '' END
		FROM checkpoints WHERE `+where+`
		UNION ALL
		SELECT DISTINCT thread_id, checkpoint_ns, checkpoint_id, 0, '', 0, '' FROM checkpoint_writes w WHERE `+where+`
		AND NOT EXISTS (SELECT 1 FROM checkpoints c
			WHERE c.thread_id = w.thread_id AND c.checkpoint_ns = w.checkpoint_ns AND c.checkpoint_id = w.checkpoint_id)`,
		append(args, args...)...)
	if err != nil {
		return nil, err
	}
	return sqlrows.Heads(rs)
}

// Remove implements checkpointer.DriverTx: per namespace, three
// set-based statements (checkpoints, writes, unreferenced values).
func (t *sqlTx) Remove(ctx context.Context, rs []checkpointer.Removal, countOnly bool) (checkpointer.SweepReport, error) {
	var rep checkpointer.SweepReport
	for _, r := range rs {
		ids, err := json.Marshal(r.IDs)
		if err != nil {
			return rep, err
		}
		keep, err := json.Marshal(r.KeepSends)
		if err != nil {
			return rep, err
		}
		const ns = `thread_id = ? AND checkpoint_ns = ? AND checkpoint_id IN ` + inJSON
		writes := ns + ` AND NOT (channel = '` + checkpointer.ChannelTasks + `' AND checkpoint_id IN ` + inJSON + `)`
		// A value row is live while a checkpoint of its namespace names
		// its (channel, version); versions written as JSON numbers are
		// compared as their integer text.
		unreferenced := `thread_id = ? AND checkpoint_ns = ? AND (channel, version) NOT IN (
			SELECT cv.key, CASE cv.type WHEN 'real' THEN CAST(CAST(cv.value AS INTEGER) AS TEXT) ELSE CAST(cv.value AS TEXT) END
			FROM checkpoints c, json_each(c.checkpoint, '$.channel_versions') cv
			WHERE c.thread_id = ? AND c.checkpoint_ns = ? AND c.checkpoint_id NOT IN ` + inJSON + `)`
		var n [3]int64
		for i, q := range []struct {
			table, where string
			args         []any
		}{
			{"checkpoints", ns, []any{r.Thread, r.NS, string(ids)}},
			{"checkpoint_writes", writes, []any{r.Thread, r.NS, string(ids), string(keep)}},
			{"checkpoint_blobs", unreferenced, []any{r.Thread, r.NS, r.Thread, r.NS, string(ids)}},
		} {
			if countOnly {
				err = t.tx.QueryRowContext(ctx, `SELECT count(*) FROM `+q.table+` WHERE `+q.where, q.args...).Scan(&n[i])
			} else {
				n[i], err = execN(ctx, t.tx, `DELETE FROM `+q.table+` WHERE `+q.where, q.args...)
			}
			if err != nil {
				return rep, err
			}
		}
		rep.Checkpoints += n[0]
		rep.Writes += n[1]
		rep.Blobs += n[2]
	}
	return rep, nil
}

// DeleteThreads implements checkpointer.DriverTx: one statement per table
// whatever the number of threads.
func (t *sqlTx) DeleteThreads(ctx context.Context, threads []string, countOnly bool) (checkpointer.SweepReport, error) {
	var rep checkpointer.SweepReport
	arg, err := json.Marshal(threads)
	if err != nil {
		return rep, err
	}
	for _, d := range []struct {
		table string
		n     *int64
	}{{"checkpoint_writes", &rep.Writes}, {"checkpoint_blobs", &rep.Blobs}, {"checkpoints", &rep.Checkpoints}} {
		if countOnly {
			err = t.tx.QueryRowContext(ctx, `SELECT count(*) FROM `+d.table+` WHERE thread_id IN `+inJSON, string(arg)).Scan(d.n)
		} else {
			*d.n, err = execN(ctx, t.tx, deleteThreadSQL(d.table), string(arg))
		}
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// deleteThreadSQL deletes the rows of table of the threads named by its
// one parameter, a JSON array of ids: a search of the primary key, which
// leads with thread_id, per id.
func deleteThreadSQL(table string) string {
	return `DELETE FROM ` + table + ` WHERE thread_id IN ` + inJSON
}

// Rows implements checkpointer.DriverTx.
func (t *sqlTx) Rows(ctx context.Context, thread string) (*checkpointer.ThreadRows, error) {
	return sqlrows.Thread(ctx, query(t.tx), threadSQL, thread)
}

// threadSQL are the statements of Rows.
var threadSQL = sqlrows.Tables{Checkpoints: "checkpoints", Blobs: "checkpoint_blobs", Writes: "checkpoint_writes"}.ThreadSQL("?")

// Overwrite implements checkpointer.DriverTx.
func (t *sqlTx) Overwrite(ctx context.Context, thread string, rows *checkpointer.ThreadRows) error {
	for _, c := range rows.Checkpoints {
		var parent, typ any
		if c.Parent != "" {
			parent = c.Parent
		}
		if c.Type != "" {
			typ = c.Type
		}
		if _, err := t.tx.ExecContext(ctx, `INSERT INTO checkpoints
			(thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata, type) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
				parent_checkpoint_id = excluded.parent_checkpoint_id, type = excluded.type,
				checkpoint = excluded.checkpoint, metadata = excluded.metadata`, thread, c.NS, c.ID, parent, c.Doc, c.Meta, typ); err != nil {
			return err
		}
	}
	for _, v := range rows.Values {
		if _, err := t.tx.ExecContext(ctx, `INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO UPDATE SET
			type = excluded.type, blob = excluded.blob`, thread, v.NS, v.Channel, v.Version, v.Type, v.Data); err != nil {
			return err
		}
	}
	for _, w := range rows.Writes {
		data := w.Data
		if data == nil {
			data = []byte{}
		}
		if _, err := t.tx.ExecContext(ctx, `INSERT INTO checkpoint_writes
			(thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET
			channel = excluded.channel, type = excluded.type, blob = excluded.blob, task_path = excluded.task_path`,
			thread, w.NS, w.Checkpoint, w.Task, w.Idx, w.Channel, w.Type, data, w.Path); err != nil {
			return err
		}
	}
	return nil
}

// rows adapts *sql.Rows to sqlrows.Rows.
type rows struct{ *sql.Rows }

// Close implements sqlrows.Rows: reading rows to the end reports their
// errors (Err).
func (r rows) Close() { _ = r.Rows.Close() }

// query is sqlrows.Query on q, a pool or a transaction.
func query(q interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}) sqlrows.Query {
	return func(ctx context.Context, stmt string, args ...any) (sqlrows.Rows, error) {
		rs, err := q.QueryContext(ctx, stmt, args...)
		if err != nil {
			return nil, err
		}
		return rows{rs}, nil
	}
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// execN runs a statement and returns the number of rows it changed.
func execN(ctx context.Context, e execer, query string, args ...any) (int64, error) {
	res, err := e.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
