package pgsaver

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/memvault/memvault/checkpointer"
)

// Audit records as rows (group commit).
//
// An audited write carries its audit record (checkpointer.RecordRow),
// which its statement inserts in the write's transaction. With group
// commit, the records of a group's writes are rows too: the puts' records
// one more CTE of queries.putCkptRows, inserted from its "ok" rows (a put
// whose parent is gone stores neither its checkpoint nor its record), the
// writes' records one INSERT of the same batch. Every op of a group stays
// stored exactly when its record is, in the group's one commit.
//
// The statements are built for the records' shape (table, columns, each
// value's type) and kept: an audit trail has one or two shapes, and the
// same text each time is what lets pgx prepare a statement once per
// connection.

// maxRecordShapes bounds the statements kept per saver: records of a
// shape past it are stored one op at a time (pgdb.Group), as before.
const maxRecordShapes = 8

// recordShape is what a statement of records as rows is built for.
type recordShape struct {
	table   string
	columns string // the columns, each quoted, comma-separated
	types   string // one SQL array type per column, comma-separated
}

// recordSQL are the two statements of one shape of records.
type recordSQL struct {
	// puts is queries.putCkptRows with the records' insert as a CTE: the
	// record of the put numbered k is stored exactly when put k is.
	puts string
	// insert stores the writes' records: unconditional, as the writes'
	// rows are (a task's writes are stored or the batch fails).
	insert string
}

// recordStatements are the statements of each shape met so far.
type recordStatements struct {
	mu     sync.Mutex
	shapes map[recordShape]*recordSQL
}

// shapeOf returns r's shape, or false when r cannot be a row of a group:
// it inserts from a query of its own (After), or holds a value of a type
// without an array type here.
func shapeOf(r *checkpointer.RecordRow) (recordShape, bool) {
	if r.After != nil || len(r.Values) == 0 || len(r.Values) != len(r.Columns) {
		return recordShape{}, false
	}
	cols, types := make([]string, len(r.Columns)), make([]string, len(r.Values))
	for i, v := range r.Values {
		switch v.(type) {
		case string:
			types[i] = "text[]"
		case int64:
			types[i] = "bigint[]"
		case time.Time:
			types[i] = "timestamptz[]"
		default:
			return recordShape{}, false
		}
		cols[i] = `"` + strings.ReplaceAll(r.Columns[i], `"`, `""`) + `"`
	}
	return recordShape{table: r.Table, columns: strings.Join(cols, ", "), types: strings.Join(types, ",")}, true
}

// statements returns the statements of shape s, built on first use, or
// nil when maxRecordShapes others are kept already.
func (rs *recordStatements) statements(q *queries, s recordShape) *recordSQL {
	if rs == nil {
		return nil
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if sql, ok := rs.shapes[s]; ok {
		return sql
	}
	if len(rs.shapes) >= maxRecordShapes {
		return nil
	}
	types := strings.Split(s.types, ",")
	n := len(types)
	params, names, cols := make([]string, n), make([]string, n), make([]string, n)
	for i, t := range types {
		// putCkptRows has 13 parameters; the records' are $14 (the put
		// each record belongs to) and on.
		params[i] = "$" + strconv.Itoa(15+i) + "::" + t
		names[i] = "c" + strconv.Itoa(i)
		cols[i] = "r." + names[i]
	}
	cte := "), record_ AS (\n\tINSERT INTO " + s.table + " (" + s.columns + ")\n\tSELECT " + strings.Join(cols, ", ") +
		"\n\tFROM unnest($14::bigint[], " + strings.Join(params, ", ") + ") AS r(k, " + strings.Join(names, ", ") + ")\n\tJOIN ok ON ok.k = r.k\n), values_ AS ("
	for i, t := range types {
		params[i] = "$" + strconv.Itoa(i+1) + "::" + t
	}
	sql := &recordSQL{
		puts:   strings.Replace(q.putCkptRows, "), values_ AS (", cte, 1),
		insert: "INSERT INTO " + s.table + " (" + s.columns + ") SELECT * FROM unnest(" + strings.Join(params, ", ") + ")",
	}
	if rs.shapes == nil {
		rs.shapes = map[recordShape]*recordSQL{}
	}
	rs.shapes[s] = sql
	return sql
}

// recordRows are the arguments of a recordSQL statement: one element of
// each column's array per record.
type recordRows struct {
	k    []int64 // the put each record belongs to (recordSQL.puts only)
	cols []any   // each a []string, []int64 or []time.Time
	n    int     // records added
}

// add appends r's values (r has the shape the rows are for), as the
// record of put k when k > 0.
func (rr *recordRows) add(r *checkpointer.RecordRow, k int) {
	if rr.cols == nil {
		rr.cols = make([]any, len(r.Values))
	}
	rr.n++
	if k > 0 {
		rr.k = append(rr.k, int64(k))
	}
	for i, v := range r.Values {
		switch v := v.(type) {
		case string:
			c, _ := rr.cols[i].([]string)
			rr.cols[i] = append(c, v)
		case int64:
			c, _ := rr.cols[i].([]int64)
			rr.cols[i] = append(c, v)
		case time.Time:
			c, _ := rr.cols[i].([]time.Time)
			rr.cols[i] = append(c, v)
		}
	}
}

// len is the number of records.
func (rr *recordRows) len() int { return rr.n }
