package pgsaver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/internal/pgretry"
)

// writeRows stores the ops of group that can be stored as rows — every
// put in one statement (queries.putCkptRows), every task's pending
// writes in one (insertWritesRows, upsertWritesRows), in one batch: one
// round trip, one commit — sets their errors in errs, and returns the
// ops of group left for the statements of one op each (pgdb.Group).
//
// A statement per op costs PostgreSQL a statement's execution each:
// planning a cached plan, starting the executor, one CTE pipeline per
// put. As rows, a group's puts cost one execution, and the rows are
// what grows. What one op's statements would do, the rows do: the
// parent's lock and check per put, first value wins, the same upserts.
//
// An op's audit record is a row too (group_records.go), stored exactly
// when its op is, in the same commit; the records of a group share one
// shape (the first record's), which is all an audit trail makes.
//
// Left for one statement each: an op with fence statements (a subject's
// key fence fails its own statement, which pgdb.Group isolates) or an
// audit record of another shape or inserted from a query of its own
// (RecordRow.After), a put whose checkpoint
// another put of the rows writes too or whose parent another put of the
// group writes, and a task's writes upserting a key another upsert of
// the rows writes (ON CONFLICT DO UPDATE cannot change a row twice in
// one statement, and a statement does not see its own inserts). None are
// taken as rows in a caller's transaction, where a failed statement
// would abort it, nor on Citus, which routes a statement to one shard
// only when it names one thread. A group of one is rows too, as cheap
// as its own statement: the conformance suite's every write through
// WriteGroup (EveryWriteGrouped) runs this path.
//
// When the batch fails (a constraint, the connection), every op of it
// is left for its own statements, which find the op at fault and store
// the others: the rows' statements change nothing they would not change
// again (upserts of the same rows, inserts of rows already there do
// nothing), so sending them again after a commit whose answer was lost
// stores nothing twice.
func (d *driver) writeRows(ctx context.Context, ops []checkpointer.GroupOp, group []int, errs []error) []int {
	if !d.own || len(group) == 0 || d.topo.Distributed(ctx, d.db) {
		return group
	}
	type ckptKey struct{ thread, ns, id string }
	type writeKey struct {
		thread, ns, ckpt, task string
		idx                    int
	}
	var puts, writes, rest []int
	putKeys, anyPut := map[ckptKey]bool{}, map[ckptKey]bool{}
	upserted := map[writeKey]bool{}
	for _, i := range group {
		if p := ops[i].Put; p != nil {
			anyPut[ckptKey{p.Thread, p.NS, p.ID}] = true
		}
	}
	// The records' statements, of the first record's shape.
	var (
		rshape recordShape
		rsql   *recordSQL
	)
	accepts := func(r *checkpointer.RecordRow) bool {
		if r == nil {
			return true
		}
		s, ok := shapeOf(r)
		if ok && rsql == nil {
			rshape, rsql = s, d.q.records.statements(d.q, s)
		}
		return ok && rsql != nil && s == rshape
	}
	for _, i := range group {
		op := ops[i]
		if stmts, _ := op.Fence().Statements(); len(stmts) > 0 {
			rest = append(rest, i)
			continue
		}
		switch {
		case op.Put != nil:
			p := op.Put
			k := ckptKey{p.Thread, p.NS, p.ID}
			if putKeys[k] || !accepts(p.Record) {
				rest = append(rest, i)
				continue
			}
			putKeys[k] = true
			puts = append(puts, i)
		default:
			w := op.Writes
			if !accepts(w.Record) {
				rest = append(rest, i)
				continue
			}
			if w.Upsert {
				keys := make([]writeKey, len(w.Rows))
				for j, r := range w.Rows {
					keys[j] = writeKey{w.Thread, w.NS, w.Checkpoint, w.Task, r.Idx}
				}
				if slices.ContainsFunc(keys, func(k writeKey) bool { return upserted[k] }) {
					rest = append(rest, i)
					continue
				}
				for _, k := range keys {
					upserted[k] = true
				}
			}
			writes = append(writes, i)
		}
	}
	// A put continuing another put of the group would not find its
	// parent in the rows statement's snapshot, nor when the parent
	// commits later as one op of the rest: it is one of the rest, which
	// pgdb.Group sends in order after the rows commit.
	puts = slices.DeleteFunc(puts, func(i int) bool {
		p := ops[i].Put
		if p.Parent != "" && anyPut[ckptKey{p.Thread, p.NS, p.Parent}] {
			rest = append(rest, i)
			return true
		}
		return false
	})
	if len(puts)+len(writes) == 0 {
		return group
	}
	stored, err := d.sendRows(ctx, ops, puts, writes, rsql)
	if err != nil {
		return group
	}
	for k, i := range puts {
		if !stored[k] {
			errs[i] = opErr(ops[i], ops[i].Put.ErrParentMissing())
		}
	}
	slices.Sort(rest)
	return rest
}

// sendRows sends the puts (ops' indexes) and the writes as rows in one
// batch, with their audit records (rsql's statements, when any op has
// one), and returns, for each put, whether it was stored (false: the
// parent it inherits from is gone).
func (d *driver) sendRows(ctx context.Context, ops []checkpointer.GroupOp, puts, writes []int, rsql *recordSQL) ([]bool, error) {
	var insert, upsert writeRowsArgs
	var putRecords, writeRecords recordRows
	for _, i := range writes {
		w := ops[i].Writes
		if w.Upsert {
			upsert.add(w)
		} else {
			insert.add(w)
		}
		if w.Record != nil {
			writeRecords.add(w.Record, 0)
		}
	}
	putStmt, putArgs := d.q.putCkptRows, []any(nil)
	if len(puts) > 0 {
		putArgs = putRowsArgs(ops, puts)
		for k, i := range puts {
			if r := ops[i].Put.Record; r != nil {
				putRecords.add(r, k+1)
			}
		}
		if putRecords.len() > 0 {
			putStmt = rsql.puts
			putArgs = append(append(putArgs, putRecords.k), putRecords.cols...)
		}
	}
	if len(puts) == 0 && len(insert.thread) == 0 && len(upsert.thread) == 0 && writeRecords.len() == 0 {
		return nil, nil // only tasks that wrote nothing, unaudited
	}
	var stored []bool
	err := pgretry.Owned(ctx, d.own, func() error {
		// A batch of its own each try: pgx keeps in a sent batch's
		// queries the statement descriptions of the connection it went
		// on, and a retry may get another connection of the pool, where
		// those statements are not prepared (26000).
		b := &pgx.Batch{}
		if len(puts) > 0 {
			b.Queue(putStmt, putArgs...)
		}
		if writeRecords.len() > 0 {
			b.Queue(rsql.insert, writeRecords.cols...)
		}
		if len(insert.thread) > 0 {
			b.Queue(d.q.insertWritesRows, insert.args()...)
		}
		if len(upsert.thread) > 0 {
			b.Queue(d.q.upsertWritesRows, upsert.args()...)
		}
		stored = make([]bool, len(puts))
		br := d.db.SendBatch(ctx, b)
		if len(puts) > 0 {
			rows, err := br.Query()
			if err != nil {
				_ = br.Close()
				return err
			}
			for rows.Next() {
				var k int64
				if err := rows.Scan(&k); err != nil {
					rows.Close()
					_ = br.Close()
					return err
				}
				if k < 1 || k > int64(len(puts)) {
					rows.Close()
					_ = br.Close()
					return fmt.Errorf("group commit: put %d of %d reported stored", k, len(puts))
				}
				stored[k-1] = true
			}
			if err := rows.Err(); err != nil {
				_ = br.Close()
				return err
			}
		}
		for range b.Len() - min(len(puts), 1) {
			if _, err := br.Exec(); err != nil {
				_ = br.Close()
				return err
			}
		}
		return br.Close()
	})
	return stored, err
}

// putRowsArgs are queries.putCkptRows' arguments for the puts of ops at
// indexes puts: one element of $1–$7 per put, one of $8–$13 per value row
// naming its put by its position (from 1).
func putRowsArgs(ops []checkpointer.GroupOp, puts []int) []any {
	n := len(puts)
	threads, nss, ids, parents := make([]string, n), make([]string, n), make([]string, n), make([]*string, n)
	docs, metas, needs := make([]json.RawMessage, n), make([]json.RawMessage, n), make([]bool, n)
	var ks []int64
	var chans, vers, types []string
	var data [][]byte
	var inls []bool
	for k, i := range puts {
		p := ops[i].Put
		threads[k], nss[k], ids[k] = p.Thread, p.NS, p.ID
		if p.Parent != "" {
			parents[k] = &p.Parent
		}
		docs[k], metas[k], needs[k] = json.RawMessage(p.Doc), json.RawMessage(p.Meta), p.NeedsParent
		blobs, inl := p.Blobs()
		for j, bl := range blobs {
			ks = append(ks, int64(k+1))
			chans, vers, types, data = append(chans, bl.Channel), append(vers, bl.Version), append(types, bl.Type), append(data, bl.Data)
			inls = append(inls, inl[j])
		}
	}
	return []any{threads, nss, ids, parents, docs, metas, needs, ks, chans, vers, types, data, inls}
}

// writeRowsArgs are the arguments of queries.insertWritesRows or
// upsertWritesRows: one element of each per pending write.
type writeRowsArgs struct {
	thread, ns, ckpt, task, path []string
	idx                          []int32
	channel, typ                 []string
	blob                         [][]byte
}

// add appends w's rows.
func (a *writeRowsArgs) add(w *checkpointer.WriteRows) {
	for _, r := range w.Rows {
		a.thread, a.ns, a.ckpt, a.task, a.path = append(a.thread, w.Thread), append(a.ns, w.NS), append(a.ckpt, w.Checkpoint), append(a.task, w.Task), append(a.path, w.Path)
		a.idx = append(a.idx, int32(r.Idx))
		a.channel, a.typ, a.blob = append(a.channel, r.Channel), append(a.typ, r.Type), append(a.blob, r.Data)
	}
}

func (a *writeRowsArgs) args() []any {
	return []any{a.thread, a.ns, a.ckpt, a.task, a.path, a.idx, a.channel, a.typ, a.blob}
}
