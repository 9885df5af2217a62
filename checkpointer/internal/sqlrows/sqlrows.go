package sqlrows

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"

	"github.com/memvault/memvault/checkpointer"
)

// Rows is a result set being read.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	// Close releases the rows; reading them to the end does too.
	Close()
}

// Query runs one statement and returns its rows: a driver's pool,
// connection or transaction.
type Query func(ctx context.Context, sql string, args ...any) (Rows, error)

// QueryOf is f, whose rows are Rows (pgx's, say), as a Query.
func QueryOf[R Rows](f func(ctx context.Context, sql string, args ...any) (R, error)) Query {
	return func(ctx context.Context, sql string, args ...any) (Rows, error) {
		rs, err := f(ctx, sql, args...)
		if err != nil {
			return nil, err
		}
		return rs, nil
	}
}

// Threads runs stmt, a ThreadsSQL statement, with after and limit on q:
// a driver's Threads.
func Threads(ctx context.Context, q Query, stmt, after string, limit int) ([]string, error) {
	rs, err := q(ctx, stmt, after, limit)
	if err != nil {
		return nil, err
	}
	return Strings(rs)
}

// Each scans every row of rs into dest and calls row after each, then
// closes rs. The first error wins.
func Each(rs Rows, dest []any, row func() error) error {
	defer rs.Close()
	for rs.Next() {
		if err := rs.Scan(dest...); err != nil {
			return err
		}
		if err := row(); err != nil {
			return err
		}
	}
	return rs.Err()
}

// Strings returns the one text column of rs.
func Strings(rs Rows) ([]string, error) {
	var out []string
	var s string
	err := Each(rs, []any{&s}, func() error { out = append(out, s); return nil })
	return out, err
}

// ThreadsSQL is Driver.Threads's statement on the checkpoints table,
// parameters after and limit (p1, p2): one range scan of the primary key.
func ThreadsSQL(checkpoints, p1, p2 string) string {
	return `SELECT DISTINCT thread_id FROM ` + checkpoints + ` WHERE thread_id > ` + p1 + ` ORDER BY thread_id LIMIT ` + p2
}

// RowThreadsSQL is engine.RowThreads's statement: the threads holding a
// row of any of tables (checkpoints, values, pending writes), after and
// limit (p1, p2), ascending. Each table gives its own first page (one
// range scan of its primary key, whose first column is thread_id) and the
// union keeps the first limit of them: the union's first page lies within
// the tables' first pages. A thread whose checkpoints are gone and whose
// values or pending writes stay is listed, which ThreadsSQL misses.
func RowThreadsSQL(tables []string, p1, p2 string) string {
	parts := make([]string, len(tables))
	for i, t := range tables {
		parts[i] = `SELECT thread_id FROM (` + ThreadsSQL(t, p1, p2) + `) AS t` + strconv.Itoa(i)
	}
	return strings.Join(parts, ` UNION `) + ` ORDER BY thread_id LIMIT ` + p2
}

// ThreadInfosSQL is Driver.ThreadInfos's statement on the checkpoints
// table: one aggregate over the primary key.
func ThreadInfosSQL(checkpoints string) string {
	return `SELECT thread_id, count(*), max(checkpoint_id) FROM ` + checkpoints + `
GROUP BY thread_id ORDER BY max(checkpoint_id) DESC, thread_id`
}

// ThreadInfos implements Driver.ThreadInfos: stmt (ThreadInfosSQL) run by
// q, its rows handed on as they arrive.
func ThreadInfos(ctx context.Context, q Query, stmt string) iter.Seq2[checkpointer.ThreadInfo, error] {
	return func(yield func(checkpointer.ThreadInfo, error) bool) {
		rs, err := q(ctx, stmt)
		if err != nil {
			yield(checkpointer.ThreadInfo{}, fmt.Errorf("list threads: %w", err))
			return
		}
		var ti checkpointer.ThreadInfo
		stopped := false
		err = Each(rs, []any{&ti.ThreadID, &ti.Checkpoints, &ti.LatestCheckpointID}, func() error {
			if stopped = !yield(ti, nil); stopped {
				return errStop
			}
			return nil
		})
		if err != nil && !stopped {
			yield(checkpointer.ThreadInfo{}, fmt.Errorf("list threads: %w", err))
		}
	}
}

// errStop ends an Each whose consumer stopped.
var errStop = errors.New("stopped")

// Heads reads the rows of a heads statement (DriverTx.Heads): thread,
// namespace, checkpoint id, stored, parent, format version and run id.
func Heads(rs Rows) ([]checkpointer.Head, error) {
	var out []checkpointer.Head
	var h checkpointer.Head
	err := Each(rs, []any{&h.Thread, &h.NS, &h.ID, &h.Stored, &h.Parent, &h.V, &h.RunID}, func() error {
		out = append(out, h)
		return nil
	})
	return out, err
}

// Where returns the conditions of q on the checkpoints table's key
// columns, each with one "?" parameter, and their arguments; a driver adds
// what it pushes down of q.Filter.
func Where(q checkpointer.DriverQuery) (conds []string, args []any) {
	add := func(cond string, arg any) {
		conds, args = append(conds, cond), append(args, arg)
	}
	if q.Thread != "" {
		add("thread_id = ?", q.Thread)
	}
	if q.NS != nil {
		add("checkpoint_ns = ?", *q.NS)
	}
	if q.ID != "" {
		add("checkpoint_id = ?", q.ID)
	}
	if q.Before != "" {
		add("checkpoint_id < ?", q.Before)
	}
	return conds, args
}

// Tables are the names of LangGraph's three tables as a driver's
// statements spell them (schema-qualified and quoted where needed).
type Tables struct{ Checkpoints, Blobs, Writes string }

// ThreadSQL returns the statements of Thread: every checkpoint, value and
// write row of the thread named by param, the one parameter of each.
func (t Tables) ThreadSQL(param string) [3]string {
	return [3]string{
		`SELECT checkpoint_ns, checkpoint_id, coalesce(parent_checkpoint_id, ''), checkpoint, metadata, coalesce(type, '')
FROM ` + t.Checkpoints + ` WHERE thread_id = ` + param,
		`SELECT checkpoint_ns, channel, version, type, blob FROM ` + t.Blobs + ` WHERE thread_id = ` + param,
		`SELECT checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, coalesce(type, ''), blob
FROM ` + t.Writes + ` WHERE thread_id = ` + param,
	}
}

// Thread implements DriverTx.Rows: the three statements of ThreadSQL
// (stmts) run by q, in the transaction q runs in.
func Thread(ctx context.Context, q Query, stmts [3]string, thread string) (*checkpointer.ThreadRows, error) {
	out := &checkpointer.ThreadRows{}
	var c checkpointer.PutRows
	var v checkpointer.NamespacedValue
	var w checkpointer.NamespacedWrite
	reads := []struct {
		dest []any
		row  func()
	}{
		// Each row starts from zero values: nothing scanned into one row
		// is shared with the next.
		{[]any{&c.NS, &c.ID, &c.Parent, &c.Doc, &c.Meta, &c.Type}, func() {
			out.Checkpoints, c = append(out.Checkpoints, c), checkpointer.PutRows{}
		}},
		{[]any{&v.NS, &v.Channel, &v.Version, &v.Type, &v.Data}, func() {
			out.Values, v = append(out.Values, v), checkpointer.NamespacedValue{}
		}},
		{[]any{&w.NS, &w.Checkpoint, &w.Task, &w.Path, &w.Idx, &w.Channel, &w.Type, &w.Data}, func() {
			out.Writes, w = append(out.Writes, w), checkpointer.NamespacedWrite{}
		}},
	}
	for i, r := range reads {
		rs, err := q(ctx, stmts[i], thread)
		if err != nil {
			return nil, err
		}
		if err := Each(rs, r.dest, func() error { r.row(); return nil }); err != nil {
			return nil, err
		}
	}
	return out, nil
}
