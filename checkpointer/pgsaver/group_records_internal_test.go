package pgsaver

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/checkpointer"
)

// recordsTable makes the audit table of these tests, an audit trail's
// pending table in shape: each record's id, time, a number and a name.
func recordsTable(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	if _, err := pool.Exec(t.Context(), `CREATE TABLE "audit ""pending""" (id text PRIMARY KEY, at timestamptz NOT NULL, n bigint, who text)`); err != nil {
		t.Fatal(err)
	}
}

// record is the audit record id of the write it is handed to.
func record(id string) *checkpointer.RecordRow {
	return &checkpointer.RecordRow{Table: `"audit ""pending"""`, Columns: []string{"id", "at", "n", "who"},
		Values: []any{id, time.Date(2026, 12, 4, 15, 0, 0, 0, time.UTC), int64(len(id)), "o'brien; DROP TABLE x --"}}
}

// storedRecords are the ids of the records stored, in order.
func storedRecords(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, _ := pool.Query(t.Context(), `SELECT id || ' ' || coalesce(n::text, '-') || ' ' || coalesce(who, '-') FROM "audit ""pending""" ORDER BY 1`)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestWriteGroupRowsRecords: audited writes of a group are rows too —
// the puts' records a CTE of the puts' statement, the writes' records one
// INSERT — and each record is stored exactly when its write is: a put
// whose parent is gone stores neither. A record of another shape, or
// one inserted from a query of its own (After), takes its op's own
// statement, as does an unaudited op beside audited ones in its rows.
func TestWriteGroupRowsRecords(t *testing.T) {
	s, pool, log := tracedSaver(t)
	recordsTable(t, pool)
	ctx := t.Context()

	otherShape := record("put-other-shape")
	otherShape.Columns, otherShape.Values = otherShape.Columns[:2], otherShape.Values[:2]
	after := record("writes-after")
	after.After = func(func(int) string) string { return "SELECT 1" }
	empty := rowsWrites("w", "c1", "t-empty", `""`, false)
	empty.Rows = nil
	ops := []checkpointer.GroupOp{
		{Put: rowsPut("p0", "c1", "", "1", `{}`)},
		{Put: rowsPut("p1", "c1", "gone", "", `{}`)}, // parent gone: neither put nor record
		{Put: rowsPut("p2", "c1", "", "1", `{}`)},    // unaudited
		{Put: rowsPut("p3", "c1", "", "1", `{}`)},    // another shape
		{Writes: rowsWrites("w", "c1", "t1", `"w1"`, false)},
		{Writes: rowsWrites("w", "c1", "t2", `"w2"`, true)},
		{Writes: empty}, // a task that wrote nothing: its record is stored
		{Writes: rowsWrites("w", "c1", "t3", `"w3"`, false)}, // After
	}
	ops[0].Put.Record = record("put-p0")
	ops[1].Put.Record = record("put-p1")
	ops[3].Put.Record = otherShape
	ops[4].Writes.Record = record("writes-t1")
	ops[5].Writes.Record = record("writes-t2")
	ops[6].Writes.Record = record("writes-empty")
	ops[7].Writes.Record = after

	errs := s.driver().WriteGroup(ctx, ops)
	for i, err := range errs {
		if i == 1 {
			if !errors.Is(err, checkpointer.ErrParentMissing) {
				t.Errorf("op 1 (parent gone): %v, want ErrParentMissing", err)
			}
		} else if err != nil {
			t.Errorf("op %d: %v", i, err)
		}
	}
	shape, ok := shapeOf(record(""))
	if !ok {
		t.Fatal("the records' shape is refused")
	}
	rsql := s.q.records.statements(&s.q, shape)
	sent := log.Take()
	count := func(sql string) int {
		return len(slices.DeleteFunc(slices.Clone(sent), func(s string) bool { return s != sql }))
	}
	for _, c := range []struct {
		what string
		sql  string
		want int
	}{
		{"audited puts as rows (ops 0-2)", rsql.puts, 1},
		{"unaudited puts' rows statement", s.q.putCkptRows, 0},
		{"the writes' records as rows (ops 4-6)", rsql.insert, 1},
		{"inserted writes as rows (ops 4, 7 is alone)", s.q.insertWritesRows, 1},
		{"upserted writes as rows (op 5)", s.q.upsertWritesRows, 1},
	} {
		if n := count(c.sql); n != c.want {
			t.Errorf("%s: sent %d times, want %d", c.what, n, c.want)
		}
	}
	if want := []string{
		"put-other-shape - -",
		"put-p0 6 o'brien; DROP TABLE x --",
		"writes-after 12 o'brien; DROP TABLE x --",
		"writes-empty 12 o'brien; DROP TABLE x --",
		"writes-t1 9 o'brien; DROP TABLE x --",
		"writes-t2 9 o'brien; DROP TABLE x --",
	}; !slices.Equal(storedRecords(t, pool), want) {
		t.Errorf("records %q, want %q", storedRecords(t, pool), want)
	}
	var at time.Time
	if err := pool.QueryRow(ctx, `SELECT at FROM "audit ""pending""" WHERE id = 'put-p0'`).Scan(&at); err != nil || !at.Equal(record("").Values[1].(time.Time)) {
		t.Errorf("record time %v, %v; want %v", at, err, record("").Values[1])
	}
	rows, _ := pool.Query(ctx, `SELECT thread_id FROM checkpoints ORDER BY 1`)
	threads, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"p0", "p2", "p3"}; !slices.Equal(threads, want) {
		t.Errorf("checkpoints of %q, want %q", threads, want)
	}
}

// TestWriteGroupRowsRecordFails: a record that cannot be inserted (its
// id is taken) fails the rows' batch; every op is then sent on its own,
// and only the op whose record failed fails — its write is not stored
// either — while the others are stored with their records.
func TestWriteGroupRowsRecordFails(t *testing.T) {
	s, pool, _ := tracedSaver(t)
	recordsTable(t, pool)
	ctx := t.Context()
	if _, err := pool.Exec(ctx, `INSERT INTO "audit ""pending""" (id, at) VALUES ('taken', now())`); err != nil {
		t.Fatal(err)
	}
	ops := []checkpointer.GroupOp{
		{Put: rowsPut("f0", "c1", "", "1", `{}`)},
		{Put: rowsPut("f1", "c1", "", "1", `{}`)},
		{Writes: rowsWrites("f0", "c1", "t1", `"w1"`, false)},
		{Writes: rowsWrites("f0", "c1", "t2", `"w2"`, false)},
	}
	ops[0].Put.Record = record("put-f0")
	ops[1].Put.Record = record("taken")
	ops[2].Writes.Record = record("writes-t1")
	ops[3].Writes.Record = record("taken")
	errs := s.driver().WriteGroup(ctx, ops)
	for i, err := range errs {
		var pe *pgconn.PgError
		if i == 1 || i == 3 {
			if !errors.As(err, &pe) || pe.Code != "23505" {
				t.Errorf("op %d (record id taken): %v, want unique_violation", i, err)
			}
		} else if err != nil {
			t.Errorf("op %d: %v", i, err)
		}
	}
	if want := []string{"put-f0 6 o'brien; DROP TABLE x --", "taken - -", "writes-t1 9 o'brien; DROP TABLE x --"}; !slices.Equal(storedRecords(t, pool), want) {
		t.Errorf("records %q, want %q", storedRecords(t, pool), want)
	}
	var ckpts, writes int
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM checkpoints WHERE thread_id = 'f1'), (SELECT count(*) FROM checkpoint_writes WHERE task_id = 't2')`).Scan(&ckpts, &writes); err != nil {
		t.Fatal(err)
	}
	if ckpts != 0 || writes != 0 {
		t.Errorf("the ops whose records failed stored %d checkpoints and %d writes, want none", ckpts, writes)
	}
}

// TestRecordShapes: the shapes a group takes as rows, and the bound on
// the statements kept.
func TestRecordShapes(t *testing.T) {
	for _, c := range []struct {
		what string
		r    *checkpointer.RecordRow
		ok   bool
	}{
		{"text, time, bigint", record("x"), true},
		{"a value of another type", &checkpointer.RecordRow{Table: "t", Columns: []string{"a"}, Values: []any{3.5}}, false},
		{"an int that is not int64", &checkpointer.RecordRow{Table: "t", Columns: []string{"a"}, Values: []any{3}}, false},
		{"a nil value", &checkpointer.RecordRow{Table: "t", Columns: []string{"a"}, Values: []any{nil}}, false},
		{"columns and values apart", &checkpointer.RecordRow{Table: "t", Columns: []string{"a", "b"}, Values: []any{"x"}}, false},
		{"no values", &checkpointer.RecordRow{Table: "t"}, false},
		{"an After query", &checkpointer.RecordRow{Table: "t", Columns: []string{"a"}, Values: []any{"x"},
			After: func(func(int) string) string { return "SELECT 1" }}, false},
	} {
		if _, ok := shapeOf(c.r); ok != c.ok {
			t.Errorf("%s: shape accepted %v, want %v", c.what, ok, c.ok)
		}
	}
	q := buildQueries("")
	for i := range maxRecordShapes + 2 {
		s, _ := shapeOf(&checkpointer.RecordRow{Table: "t", Columns: []string{string(rune('a' + i))}, Values: []any{"x"}})
		if got := q.records.statements(&q, s) != nil; got != (i < maxRecordShapes) {
			t.Errorf("shape %d: statements built %v", i, got)
		}
	}
	s, _ := shapeOf(&checkpointer.RecordRow{Table: "t", Columns: []string{"a"}, Values: []any{"x"}})
	if q.records.statements(&q, s) == nil {
		t.Error("a shape kept is refused once the bound is reached")
	}
}
