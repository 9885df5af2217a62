package pgsaver

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/internal/sqlrows"
	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/internal/pgcitus"
	"github.com/memvault/memvault/internal/pgdb"
	"github.com/memvault/memvault/internal/pgfence"
	"github.com/memvault/memvault/internal/pgretry"
)

// driver is the PostgreSQL checkpointer.Driver: LangGraph's tables and
// statements. Nothing is serialized in the process: the removals lock the
// rows they remove (DriverTx.Lock) and a put locks the parent it inherits
// from FOR KEY SHARE (queries.putCkpt).
type driver struct {
	db DB
	q  *queries
	// own: db is the saver's own pool or connection, so a statement
	// PostgreSQL aborted to break a deadlock may be run again; a caller's
	// transaction is aborted as a whole and the error goes back to it.
	own bool
	// topo tells whether db is a Citus coordinator.
	topo *pgcitus.Topology
}

var _ checkpointer.Driver = (*driver)(nil)

var _ checkpointer.LatestKeeper = (*driver)(nil)

// Name implements checkpointer.Driver.
func (*driver) Name() string { return "postgres" }

// Capabilities implements checkpointer.Driver: metadata @> filter is
// exact, Python LangGraph shares the tables, a write inserts its audit
// record in its own statement (put) or batch (put_writes), a read in its
// statement (ReadRecords, on the saver's own pool or connection only: in a
// caller's transaction the record would commit after the read returned,
// or never), and a prune is one batch (KeepLatest).
func (d *driver) Capabilities() checkpointer.DriverCapabilities {
	return checkpointer.DriverCapabilities{ExactFilter: true, InlineParentValues: true, TxRecords: true, KeepLatest: true, ReadRecords: d.own}
}

// Load implements checkpointer.Driver with one statement: the checkpoint
// row, its values (the blob rows at each channel's current version), its
// writes and, before format 4, its pending sends.
func (d *driver) Load(ctx context.Context, thread, ns, id string) (*checkpointer.StoredCheckpoint, error) {
	sql, args := d.q.getLatest, []any{thread, ns}
	if id != "" {
		sql, args = d.q.getByID, []any{thread, ns, id}
	}
	if r := checkpointer.ReadRecordOf(ctx); r != nil {
		sts, err := d.recordedTuples(ctx, r, sql, args)
		if err != nil {
			return nil, fmt.Errorf("get tuple: %w", err)
		}
		if len(sts) == 0 {
			return nil, nil
		}
		return sts[0], nil
	}
	var st *checkpointer.StoredCheckpoint
	var err error
	for s, e := range tuples(ctx, d.db, sql, args) {
		st, err = s, e // one row at most: read to the end, where a late error shows
	}
	if err != nil {
		return nil, fmt.Errorf("get tuple: %w", err)
	}
	return st, nil
}

// Scan implements checkpointer.Driver with one statement whose rows are
// handed on as they arrive: memory stays bounded by one row whatever the
// number of checkpoints, and breaking out of the loop closes the query.
func (d *driver) Scan(ctx context.Context, q checkpointer.DriverQuery) iter.Seq2[*checkpointer.StoredCheckpoint, error] {
	return func(yield func(*checkpointer.StoredCheckpoint, error) bool) {
		if q.Thread == "" {
			// Across threads, Citus needs the statement in another form.
			d.topo.Distributed(ctx, d.db) // for Form
		}
		sql, args, err := d.buildList(q)
		if err != nil {
			yield(nil, fmt.Errorf("list: %w", err))
			return
		}
		r := checkpointer.ReadRecordOf(ctx)
		switch {
		case r != nil && sql != "" && q.Limit > 0 && q.Limit <= checkpointer.MaxRecordedScan:
			// The record and the page in one statement; the rows are
			// handed on once it committed.
			sts, err := d.recordedTuples(ctx, r, sql, args)
			if err != nil {
				yield(nil, fmt.Errorf("list: %w", err))
				return
			}
			for _, st := range sts {
				if !yield(st, nil) {
					return
				}
			}
			return
		case r != nil:
			// Too many rows to hold until a commit: the record commits
			// first, by itself.
			if err := d.insertRecord(ctx, r); err != nil {
				yield(nil, fmt.Errorf("list: %w", err))
				return
			}
		}
		if sql == "" {
			return // nothing can match
		}
		for st, err := range tuples(ctx, d.db, sql, args) {
			if err != nil {
				err = fmt.Errorf("list: %w", err)
			}
			if !yield(st, err) {
				return
			}
		}
	}
}

// tuples runs sql, a selectTuple statement, and yields its rows decoded
// (pgdb.Seq), one rawTuple reused across them.
func tuples(ctx context.Context, db DB, sql string, args []any) iter.Seq2[*checkpointer.StoredCheckpoint, error] {
	var r rawTuple
	return pgdb.Seq(ctx, db, sql, args, func(rows pgx.Rows) (*checkpointer.StoredCheckpoint, error) {
		if err := r.scan(rows); err != nil {
			return nil, err
		}
		return r.stored()
	})
}

// recordedTuples runs sql, a selectTuple statement, with the insert of
// r, a read's audit record, as a CTE of it: one statement, one round
// trip, one implicit transaction, which the server commits before it
// answers the statement's Sync. The rows are returned only once the
// statement was read to its end, so after that commit; the server itself
// sends no row before the insert ran (a statement with a data-modifying
// CTE runs to its end before its first row goes out), and when the
// insert or the commit fails the statement fails and nothing read is
// returned (TestWritesInTx's refused read). One statement, not a
// batch of the insert and the query: on the benchmark's get_tuple at 1 in
// flight the batch cost the server ~20 µs a read more (its executor
// start-up and protocol messages). Retried as the driver's writes are
// (pgretry.Owned: the record's row is the same, and the aborted
// transaction stored nothing).
//
// On a Citus coordinator the record commits first, by itself, and the
// query follows: a CTE that inserts into the coordinator's pending table
// beside a query of distributed tables is planned apart from it there,
// and that path is not tested.
func (d *driver) recordedTuples(ctx context.Context, r *checkpointer.RecordRow, sql string, args []any) ([]*checkpointer.StoredCheckpoint, error) {
	collect := func(sql string, args []any) (out []*checkpointer.StoredCheckpoint, _ error) {
		for st, err := range tuples(ctx, d.db, sql, args) {
			if err != nil {
				return nil, err
			}
			out = append(out, st)
		}
		return out, nil
	}
	if d.topo.Distributed(ctx, d.db) {
		if err := d.insertRecord(ctx, r); err != nil {
			return nil, err
		}
		return collect(sql, args)
	}
	stmt, all := withRecordCTE(sql, args, r)
	var out []*checkpointer.StoredCheckpoint
	err := pgretry.Owned(ctx, d.own, func() (err error) {
		out, err = collect(stmt, all)
		return err
	})
	return out, err
}

// withRecordCTE returns stmt with r's insert as its first CTE (record_),
// and args with r's values after them: the statement stores r exactly
// when it commits.
func withRecordCTE(stmt string, args []any, r *checkpointer.RecordRow) (string, []any) {
	n := len(args)
	return "WITH record_ AS (\n\t" + r.InsertSQL(func(i int) string { return "$" + strconv.Itoa(n+i+1) }) + "\n)\n" + stmt,
		append(slices.Clip(args), r.Args()...)
}

// recordInsert is r's INSERT alone, its values $1 on.
func recordInsert(r *checkpointer.RecordRow) string {
	return r.InsertSQL(func(i int) string { return "$" + strconv.Itoa(i+1) })
}

// insertRecord commits r, a read's audit record, by itself.
func (d *driver) insertRecord(ctx context.Context, r *checkpointer.RecordRow) error {
	err := pgretry.Owned(ctx, d.own, func() error {
		_, err := d.db.Exec(ctx, recordInsert(r), r.Args()...)
		return err
	})
	if err != nil {
		return fmt.Errorf("audit record: %w", err)
	}
	return nil
}

// buildList builds a Scan's statement, across threads in the form for the
// database (pgcitus.Topology.Form: ask Distributed first). An empty
// statement means no row can match (a filter holding a NUL, which stored
// metadata never contains).
func (d *driver) buildList(q checkpointer.DriverQuery) (string, []any, error) {
	conds, args := sqlrows.Where(q)
	if len(q.Filter) > 0 {
		f, err := json.Marshal(q.Filter)
		if err != nil {
			return "", nil, fmt.Errorf("filter: %w", err)
		}
		if strings.Contains(string(f), `\u0000`) {
			return "", nil, nil
		}
		conds, args = append(conds, "c.metadata @> ?::jsonb"), append(args, string(f))
	}
	var sb strings.Builder
	if q.Thread != "" {
		sb.WriteString(d.q.selectTupleThread) // the thread is $1: sqlrows.Where's first condition
	} else {
		sb.WriteString(d.topo.Form(d.q.selectTuple))
	}
	if len(conds) > 0 {
		// The conditions' columns are the outer row's (c): the value
		// and write subqueries are in the select list. Their "?" are
		// the statement's only ones (pgdb.Rebind).
		sb.WriteString("\nWHERE " + pgdb.Rebind(strings.Join(conds, " AND ")))
	}
	sb.WriteString("\nORDER BY c.checkpoint_id DESC")
	if q.Limit > 0 {
		// A literal, not a parameter: with a parameter, the generic plan of
		// the prepared statement does not know the limit is small and may
		// compute the value subqueries of every row before sorting.
		sb.WriteString(" LIMIT " + strconv.Itoa(q.Limit))
	}
	return sb.String(), args, nil
}

// rawTuple is one row of selectTuple, reused across the rows of a Scan.
type rawTuple struct {
	threadID, ns, id string
	parent           *string
	checkpoint       []byte
	metadata         []byte
	// Two-dimensional bytea arrays, flattened row by row.
	values pgtype.FlatArray[[]byte] // [channel, version, type, blob]...
	writes pgtype.FlatArray[[]byte] // [task_id, idx, channel, type, blob]...
	sends  pgtype.FlatArray[[]byte] // [task_id, idx, channel, type, blob]...
}

func (r *rawTuple) scan(rows pgx.Rows) error {
	r.parent, r.values, r.writes, r.sends = nil, nil, nil, nil
	return rows.Scan(&r.threadID, &r.ns, &r.id, &r.parent, &r.checkpoint, &r.metadata, &r.values, &r.writes, &r.sends)
}

// stored splits the row's arrays into the driver's stored form.
func (r *rawTuple) stored() (*checkpointer.StoredCheckpoint, error) {
	st := &checkpointer.StoredCheckpoint{Thread: r.threadID, NS: r.ns, ID: r.id, Doc: r.checkpoint, Meta: r.metadata}
	if r.parent != nil {
		st.Parent = *r.parent
	}
	fail := func(what string) error { return fmt.Errorf("checkpoint %q: malformed %s", r.id, what) }
	values, ok := pgdb.SplitRows(r.values, 4)
	if !ok {
		return nil, fail("channel values")
	}
	st.Values = make([]checkpointer.ValueRow, len(values))
	for i, e := range values {
		st.Values[i] = checkpointer.ValueRow{Channel: string(e[0]), Version: string(e[1]), Type: string(e[2]), Data: e[3]}
	}
	if st.Writes, ok = writeRows(r.writes); !ok {
		return nil, fail("pending writes")
	}
	if len(r.sends) > 0 && r.parent != nil {
		if st.Sends, ok = writeRows(r.sends); !ok {
			return nil, fail("pending sends")
		}
	}
	return st, nil
}

// writeRows decodes the rows of a flattened [task_id, idx, channel,
// type, blob] array: the pending writes, and the pending sends.
func writeRows(flat [][]byte) ([]checkpointer.WriteRow, bool) {
	rows, ok := pgdb.SplitRows(flat, 5)
	if !ok {
		return nil, false
	}
	out := make([]checkpointer.WriteRow, len(rows))
	for i, e := range rows {
		idx, err := strconv.Atoi(string(e[1]))
		if err != nil {
			return nil, false
		}
		out[i] = checkpointer.WriteRow{Task: string(e[0]), Idx: idx, Channel: string(e[2]), Type: string(e[3]), Data: e[4]}
	}
	return out, true
}

// Threads implements checkpointer.Driver: one range scan of the primary
// key.
func (d *driver) Threads(ctx context.Context, after string, limit int) ([]string, error) {
	return sqlrows.Threads(ctx, query(d.db), d.q.threads, after, limit)
}

// RowThreads implements engine.RowThreads: one statement, a range scan of
// each table's primary key (sqlrows.RowThreadsSQL).
func (d *driver) RowThreads(ctx context.Context, after string, limit int) ([]string, error) {
	return sqlrows.Threads(ctx, query(d.db), d.q.rowThreads, after, limit)
}

// ThreadInfos implements checkpointer.Driver with one aggregate query,
// streamed.
func (d *driver) ThreadInfos(ctx context.Context) iter.Seq2[checkpointer.ThreadInfo, error] {
	return sqlrows.ThreadInfos(ctx, query(d.db), d.q.threadInfos)
}

// query is sqlrows.Query on db.
func query(db DB) sqlrows.Query { return sqlrows.QueryOf(db.Query) }

// Put implements checkpointer.Driver: one statement (after the fence's),
// one round trip.
func (d *driver) Put(ctx context.Context, p *checkpointer.PutRows) error {
	err := pgretry.Owned(ctx, d.own, func() error { return put(ctx, d.db, d.q, p) })
	if err != nil {
		return fmt.Errorf("put %s: %w", p.ID, err)
	}
	return nil
}

// put runs a put's batch on db: the fence's statements first (failing
// before anything is written), then queries.putCkpt (see pgfence.Send).
func put(ctx context.Context, db DB, q *queries, p *checkpointer.PutRows) error {
	b := &pgx.Batch{}
	inSQL := pgfence.Queue(b, []checkpointer.WriteFence{p.Fence})
	stored := false
	stmt, args := putStatement(q, p)
	b.Queue(stmt, args...).Exec(func(tag pgconn.CommandTag) error {
		stored = tag.RowsAffected() > 0 // none: the parent it inherits from is gone
		return nil
	})
	if err := pgfence.Send(ctx, db, []checkpointer.WriteFence{p.Fence}, inSQL, b); err != nil {
		return err
	}
	if !stored {
		return p.ErrParentMissing()
	}
	return nil
}

// putStatement is the statement of a put (queries.putCkpt, with its
// record's insert when p has one) and its arguments. It inserts the
// checkpoint row, and reports one row changed, exactly when it stores
// anything: a put whose parent is gone stores nothing.
func putStatement(q *queries, p *checkpointer.PutRows) (string, []any) {
	var parent *string
	if p.Parent != "" {
		parent = &p.Parent
	}
	blobs, inl := p.Blobs()
	n := len(blobs)
	chans, vers, types, data := make([]string, n), make([]string, n), make([]string, n), make([][]byte, n)
	for i, bl := range blobs {
		chans[i], vers[i], types[i], data[i] = bl.Channel, bl.Version, bl.Type, bl.Data
	}
	stmt, args := q.putCkpt, []any{p.Thread, p.NS, p.ID, parent, json.RawMessage(p.Doc), json.RawMessage(p.Meta),
		chans, vers, types, data, inl, p.NeedsParent}
	if p.Record != nil {
		// The record is one more CTE of the put's statement, inserted
		// from the same one-row "ok" as the checkpoint: it is stored
		// exactly when the put is, in the same commit.
		n := len(args)
		insert := p.Record.InsertSQL(func(i int) string { return "$" + strconv.Itoa(n+i+1) })
		stmt = strings.Replace(stmt, "), values_ AS (", "), record_ AS (\n\t"+insert+" FROM ok\n), values_ AS (", 1)
		args = append(args, p.Record.Values...)
	}
	return stmt, args
}

// PutWrites implements checkpointer.Driver: one statement, one round trip
// (with the fence's, when the rows are sealed under a subject's key).
func (d *driver) PutWrites(ctx context.Context, w *checkpointer.WriteRows) error {
	err := pgretry.Owned(ctx, d.own, func() error { return putWrites(ctx, d.db, d.q, w) })
	if err != nil {
		return fmt.Errorf("put writes: %w", err)
	}
	return nil
}

func putWrites(ctx context.Context, db DB, q *queries, w *checkpointer.WriteRows) error {
	b := &pgx.Batch{}
	inSQL := pgfence.Queue(b, []checkpointer.WriteFence{w.Fence})
	if b.Len() == 0 && inSQL {
		stmt, args := writesStatement(q, w)
		if w.Record != nil {
			// The record is a CTE of the writes' statement: one
			// statement, one commit, run once whatever the INSERT's
			// conflicts.
			stmt, args = withRecordCTE(stmt, args, w.Record)
		}
		_, err := db.Exec(ctx, stmt, args...)
		return err
	}
	queueWrites(b, q, w)
	return pgfence.Send(ctx, db, []checkpointer.WriteFence{w.Fence}, inSQL, b)
}

// queueWrites queues w's record insert, if any, then its rows' insert to
// b (after its fence's statements): in the batch's one transaction, the
// writes and their record commit together, or neither does.
func queueWrites(b *pgx.Batch, q *queries, w *checkpointer.WriteRows) {
	if w.Record != nil {
		b.Queue(recordInsert(w.Record), w.Record.Args()...)
	}
	stmt, args := writesStatement(q, w)
	b.Queue(stmt, args...)
}

// writesStatement is the insert of w's rows and its arguments.
func writesStatement(q *queries, w *checkpointer.WriteRows) (string, []any) {
	n := len(w.Rows)
	idxs, chans, types, blobs := make([]int32, n), make([]string, n), make([]string, n), make([][]byte, n)
	for i, r := range w.Rows {
		idxs[i], chans[i], types[i], blobs[i] = int32(r.Idx), r.Channel, r.Type, r.Data
	}
	stmt := q.insertWrites
	if w.Upsert {
		stmt = q.upsertWrites
	}
	return stmt, []any{w.Thread, w.NS, w.Checkpoint, w.Task, w.Path, idxs, chans, types, blobs}
}

// Update implements checkpointer.Driver: fn runs in a transaction (a
// savepoint of the caller's, on a saver bound to one), run again when
// PostgreSQL aborted it to break a deadlock. The transaction spends no
// round trip of its own (pgdb.Tx): a removal's BEGIN goes with its lock
// (pgTx.Lock) and its COMMIT with its deletes (pgTx.Remove), so a
// removal (a sweep's batch, DeleteForRuns, DeleteCheckpoint) is three
// round trips: the heads, the lock, the removal. A prune is one
// (KeepLatest).
func (d *driver) Update(ctx context.Context, fn func(checkpointer.DriverTx) error) error {
	return pgretry.Owned(ctx, d.own, func() error {
		d.topo.Distributed(ctx, d.db) // for the statements' forms
		return pgdb.RunTx(ctx, d.db, func(tx *pgdb.Tx) error {
			return binding.FenceErr(fn(&pgTx{tx: tx, q: d.q, topo: d.topo}))
		})
	})
}

// pgTx is a transaction (checkpointer.DriverTx).
type pgTx struct {
	tx *pgdb.Tx
	q  *queries
	// topo: whether the tables are distributed (Citus), asked by Update.
	topo *pgcitus.Topology
}

// Put implements checkpointer.DriverTx.
func (t *pgTx) Put(ctx context.Context, p *checkpointer.PutRows) error {
	return put(ctx, t.tx, t.q, p)
}

// PutWrites implements checkpointer.DriverTx.
func (t *pgTx) PutWrites(ctx context.Context, w *checkpointer.WriteRows) error {
	return putWrites(ctx, t.tx, t.q, w)
}

// Fence implements checkpointer.DriverTx: the statements in the
// transaction, or the check when there are none (pgfence.Exec).
func (t *pgTx) Fence(ctx context.Context, f checkpointer.WriteFence) error {
	return pgfence.Exec(ctx, t.tx, []checkpointer.WriteFence{f})
}

// Heads implements checkpointer.DriverTx: one statement, no lock.
func (t *pgTx) Heads(ctx context.Context, sel checkpointer.HeadSelector) ([]checkpointer.Head, error) {
	var out []checkpointer.Head
	b, err := t.tx.Batch(ctx)
	if err != nil {
		return nil, err
	}
	queueHeads(b, t.q, sel, &out)
	return out, t.tx.Send(ctx, b, false)
}

// headsSettings and removalSettings are the settings of a removal's
// statements, local to their transaction (the first heads read's is an
// implicit one: the batch of Driver.Heads). The heads statements plan
// the same for any arguments, so they run on the plan PostgreSQL caches
// (planned per call, a fifth of a one-thread prune's server CPU went to
// planning). The lock and removal statements take arrays of ids: the
// generic plan for them (which cannot see how many ids an array holds)
// cost a one-thread prune ~3× the server CPU of a custom plan, so they
// are planned for their arguments. The value collection's estimate (a
// hundred versions per checkpoint, the planner's guess for
// jsonb_each_text) passes JIT's threshold from a few hundred threads
// (compiling cost 0.6 s of CPU, the collection itself 0.3 s) and sized
// its hash of the live versions for several batches in temporary files.
// Only in the saver's own transactions: in a caller's they would outlive
// the savepoint. A Citus coordinator cannot make a distributed plan of a
// generic one ("could not create distributed plan": the parameters pick
// the shards), so there the heads are planned per call. A prune
// (KeepLatest) runs with headsSettings: its statements take the threads
// alone, like the heads, and planned per call their planning was a third
// of a one-thread prune's server CPU.
var headsSettings = pgcitus.Forms{
	`SELECT set_config('plan_cache_mode', 'force_generic_plan', true), set_config('jit', 'off', true), set_config('work_mem', '32MB', true)`,
	`SELECT set_config('jit', 'off', true), set_config('work_mem', '32MB', true)`,
}

const removalSettings = `SELECT set_config('plan_cache_mode', 'force_custom_plan', true), set_config('jit', 'off', true),
	set_config('work_mem', '32MB', true)`

// Heads implements checkpointer.Driver: one statement (after the
// settings, on the saver's own pool: headsSettings), one round trip.
// The engine decides on them what it locks (pgTx.Lock).
func (d *driver) Heads(ctx context.Context, sel checkpointer.HeadSelector) ([]checkpointer.Head, error) {
	var out []checkpointer.Head
	b := &pgx.Batch{}
	if d.own {
		d.topo.Distributed(ctx, d.db) // for Form
		b.Queue(d.topo.Form(headsSettings))
	}
	queueHeads(b, d.q, sel, &out)
	return out, d.db.SendBatch(ctx, b).Close()
}

// queueHeads queues to b the statement of the heads sel selects, its rows
// read into out.
func queueHeads(b *pgx.Batch, q *queries, sel checkpointer.HeadSelector, out *[]checkpointer.Head) {
	sql, args := q.headsThreads[sel.Orphans], []any{sel.Threads, sel.NS}
	if len(sel.RunIDs) > 0 {
		sql, args = q.headsRuns[sel.Orphans], []any{sel.RunIDs}
	}
	b.Queue(sql, args...).Query(func(rows pgx.Rows) (err error) { *out, err = sqlrows.Heads(rows); return err })
}

// DeleteThreads implements checkpointer.Driver: one batch, one implicit
// transaction, one round trip (see pgTx.DeleteThreads).
func (d *driver) DeleteThreads(ctx context.Context, threads []string) error {
	d.topo.Distributed(ctx, d.db) // for QueueLock
	return pgretry.Owned(ctx, d.own, func() error {
		return d.db.SendBatch(ctx, deleteThreadsBatch(&pgx.Batch{}, d.q, d.topo, threads, nil)).Close()
	})
}

// deleteThreadsBatch queues to b the lock of the threads' checkpoints (one
// statement per thread on Citus: pgcitus.Topology.QueueLock), their delete
// with their writes, then the collection of their values in a later
// statement; counts, when not nil, receives the numbers of checkpoints,
// writes and values removed.
func deleteThreadsBatch(b *pgx.Batch, q *queries, topo *pgcitus.Topology, threads []string, counts *checkpointer.SweepReport) *pgx.Batch {
	topo.QueueLock(b, q.lockThreads, threads)
	del := b.Queue(q.deleteThreads, threads)
	gc := b.Queue(q.gcThreads, threads)
	if counts != nil {
		del.QueryRow(func(row pgx.Row) error { return row.Scan(&counts.Checkpoints, &counts.Writes) })
		gc.QueryRow(func(row pgx.Row) error { return row.Scan(&counts.Blobs) })
	}
	return b
}

// KeepLatest implements checkpointer.LatestKeeper with one batch, one
// round trip, one implicit transaction (see queries.keepLatest): the lock
// and delete of the older checkpoints (one statement per thread on
// Citus), then the orphan writes and the values in a later statement.
func (d *driver) KeepLatest(ctx context.Context, k checkpointer.KeepLatest) error {
	d.topo.Distributed(ctx, d.db) // for Form and QueueLock
	return pgretry.Owned(ctx, d.own, func() error {
		b := &pgx.Batch{}
		if d.own {
			b.Queue(d.topo.Form(headsSettings))
		}
		d.topo.QueueLock(b, d.q.keepLatest, k.Threads)
		b.Queue(d.q.orphanWrites, k.Threads, k.SendsChannel, k.SendsBefore)
		return d.db.SendBatch(ctx, b).Close()
	})
}

// columns splits removals into the columns of their rows, and of their
// KeepSends, and lists their threads.
func columns(rs []checkpointer.Removal) (threads, t, ns, id, kt, kns, kid []string) {
	for _, r := range rs {
		threads = append(threads, r.Thread)
		for _, i := range r.IDs {
			t, ns, id = append(t, r.Thread), append(ns, r.NS), append(id, i)
		}
		for _, i := range r.KeepSends {
			kt, kns, kid = append(kt, r.Thread), append(kns, r.NS), append(kid, i)
		}
	}
	slices.Sort(threads)
	return slices.Compact(threads), t, ns, id, kt, kns, kid
}

// Lock implements checkpointer.DriverTx: queries.lock, then the heads in
// a later statement of the same round trip, whose snapshot includes the
// puts the lock waited for; the transaction's BEGIN, when it is the
// first, goes with them.
func (t *pgTx) Lock(ctx context.Context, rs []checkpointer.Removal, sel checkpointer.HeadSelector) ([]checkpointer.Head, error) {
	threads, ct, cns, cid, _, _, _ := columns(rs)
	b, err := t.tx.Batch(ctx)
	if err != nil {
		return nil, err
	}
	if !t.tx.Nested() {
		b.Queue(removalSettings)
	}
	t.topo.QueueLock(b, t.q.lock, threads, ct, cns, cid) // on Citus, one statement per thread
	var out []checkpointer.Head
	queueHeads(b, t.q, sel, &out)
	return out, t.tx.Send(ctx, b, false)
}

// Remove implements checkpointer.DriverTx: the deletes, then the value
// collection in a later statement (queries.gcBlobs), and the COMMIT in
// the same round trip (Remove is the transaction's last call). Counting
// runs the same statements in a savepoint rolled back (pgdb.Tx.SendQueued).
func (t *pgTx) Remove(ctx context.Context, rs []checkpointer.Removal, countOnly bool) (checkpointer.SweepReport, error) {
	var rep checkpointer.SweepReport
	threads, ct, cns, cid, kt, kns, kid := columns(rs)
	namespaces := slices.Compact(slices.Sorted(slices.Values(cns)))
	err := t.tx.SendQueued(ctx, true, countOnly, func(b *pgx.Batch) {
		b.Queue(t.q.remove, threads, ct, cns, cid, kt, kns, kid).QueryRow(func(row pgx.Row) error {
			return row.Scan(&rep.Checkpoints, &rep.Writes)
		})
		b.Queue(t.q.gcBlobs, threads, namespaces).QueryRow(func(row pgx.Row) error { return row.Scan(&rep.Blobs) })
	})
	return rep, err
}

// DeleteThreads implements checkpointer.DriverTx: lock, delete the
// checkpoints and writes, collect the values (queries.deleteThreads).
func (t *pgTx) DeleteThreads(ctx context.Context, threads []string, countOnly bool) (checkpointer.SweepReport, error) {
	var rep checkpointer.SweepReport
	err := t.tx.SendQueued(ctx, false, countOnly, func(b *pgx.Batch) { deleteThreadsBatch(b, t.q, t.topo, threads, &rep) })
	return rep, err
}

// Rows implements checkpointer.DriverTx.
func (t *pgTx) Rows(ctx context.Context, thread string) (*checkpointer.ThreadRows, error) {
	return sqlrows.Thread(ctx, query(t.tx), t.q.thread, thread)
}

// Overwrite implements checkpointer.DriverTx: one statement per table.
func (t *pgTx) Overwrite(ctx context.Context, thread string, rows *checkpointer.ThreadRows) error {
	if len(rows.Checkpoints)+len(rows.Values)+len(rows.Writes) == 0 {
		return nil
	}
	b, err := t.tx.Batch(ctx)
	if err != nil {
		return err
	}
	if n := len(rows.Checkpoints); n > 0 {
		ns, id, parent, typ := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		doc, md := make([]json.RawMessage, n), make([]json.RawMessage, n)
		for i, c := range rows.Checkpoints {
			ns[i], id[i], parent[i], doc[i], md[i], typ[i] = c.NS, c.ID, c.Parent, c.Doc, c.Meta, c.Type
		}
		b.Queue(t.q.putCkptsCopy, thread, ns, id, parent, doc, md, typ)
	}
	if n := len(rows.Values); n > 0 {
		ns, ch, ver, typ, data := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([][]byte, n)
		for i, v := range rows.Values {
			ns[i], ch[i], ver[i], typ[i], data[i] = v.NS, v.Channel, v.Version, v.Type, v.Data
		}
		b.Queue(t.q.putBlobsCopy, thread, ns, ch, ver, typ, data)
	}
	if n := len(rows.Writes); n > 0 {
		ns, cid, tid, tp, ch, typ := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		idx, data := make([]int32, n), make([][]byte, n)
		for i, w := range rows.Writes {
			ns[i], cid[i], tid[i], tp[i], idx[i], ch[i], typ[i], data[i] = w.NS, w.Checkpoint, w.Task, w.Path, int32(w.Idx), w.Channel, w.Type, w.Data
			if data[i] == nil {
				data[i] = []byte{}
			}
		}
		b.Queue(t.q.putWritesCopy, thread, ns, cid, tid, tp, idx, ch, typ, data)
	}
	return t.tx.Send(ctx, b, false)
}
