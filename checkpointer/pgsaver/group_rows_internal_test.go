package pgsaver

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// tracedSaver is a set-up saver of a schema of its own whose pool logs
// every statement it sends.
func tracedSaver(t *testing.T) (*Saver, *pgxpool.Pool, *pgtest.StatementLog) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(pgtest.SchemaDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	log := &pgtest.StatementLog{}
	cfg.ConnConfig.Tracer = log
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	s, err := New(pool, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(t.Context()); err != nil {
		t.Fatal(err)
	}
	log.Take()
	return s, pool, log
}

// rowsPut is a put of checkpoint id on thread with one value of channel
// "a" at version ver (none when ver is empty) and metadata meta.
func rowsPut(thread, id, parent, ver, meta string) *checkpointer.PutRows {
	versions := "{}"
	var values []checkpointer.ValueRow
	if ver != "" {
		versions = fmt.Sprintf(`{"a": %q}`, ver)
		values = []checkpointer.ValueRow{{Channel: "a", Version: ver, Type: "json", Data: []byte(`"` + id + `"`)}}
	}
	return &checkpointer.PutRows{Thread: thread, ID: id, Parent: parent, NeedsParent: parent != "", V: 4,
		Doc:  []byte(`{"v": 4, "channel_values": {}, "channel_versions": ` + versions + `, "versions_seen": {}}`),
		Meta: []byte(meta), Values: values, Fence: noFence{}}
}

func rowsWrites(thread, ckpt, task, data string, upsert bool) *checkpointer.WriteRows {
	return &checkpointer.WriteRows{Thread: thread, Checkpoint: ckpt, Task: task, Upsert: upsert, Fence: noFence{},
		Rows: []checkpointer.WriteRow{{Task: task, Idx: 0, Channel: "x", Type: "json", Data: []byte(data)}}}
}

// TestWriteGroupRows: a group's puts and writes go as rows — every
// put in one statement, the inserted and the upserted writes in one
// each — but for the ops one statement could not store: a put of a
// checkpoint another put of the group writes, a put continuing a put of
// the group, and writes upserting a key other writes of the group
// upsert. Those go after the rows, in order. Each op is told its own
// outcome (a put whose parent is gone fails alone) and the tables end
// as the ops stored one after the other would leave them.
func TestWriteGroupRows(t *testing.T) {
	s, pool, log := tracedSaver(t)
	ctx := t.Context()
	ops := []checkpointer.GroupOp{
		{Put: rowsPut("r", "a1", "", "1", `{"by": "first"}`)},
		{Put: rowsPut("r2", "b1", "gone", "", `{}`)}, // parent gone: fails alone
		{Put: rowsPut("r", "a2", "a1", "2", `{}`)},   // continues op 0
		{Put: rowsPut("r", "a1", "", "1", `{"by": "second"}`)},
		{Writes: rowsWrites("r", "a1", "t1", `"w1"`, false)},
		{Writes: rowsWrites("r", "a1", "t2", `"w2"`, true)},
		{Writes: rowsWrites("r", "a1", "t2", `"w3"`, true)}, // upserts op 5's key
		{Put: rowsPut("r3", "e1", "", "", `{}`)},
	}
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
	sent := log.Take()
	count := func(sql string) int {
		return len(slices.DeleteFunc(slices.Clone(sent), func(s string) bool { return s != sql }))
	}
	for _, c := range []struct {
		what string
		sql  string
		want int
	}{
		{"puts as rows (ops 0, 1, 7)", s.q.putCkptRows, 1},
		{"puts one by one (ops 2, 3)", s.q.putCkpt, 2},
		{"inserted writes as rows (op 4)", s.q.insertWritesRows, 1},
		{"upserted writes as rows (op 5)", s.q.upsertWritesRows, 1},
		{"upserted writes one by one (op 6)", s.q.upsertWrites, 1},
	} {
		if n := count(c.sql); n != c.want {
			t.Errorf("%s: sent %d times, want %d", c.what, n, c.want)
		}
	}

	var ckpts []string
	rows, _ := pool.Query(ctx, `SELECT thread_id || '/' || checkpoint_id || ' ' || metadata::text FROM checkpoints ORDER BY 1`)
	ckpts, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{`r/a1 {"by": "second"}`, `r/a2 {}`, `r3/e1 {}`}; !slices.Equal(ckpts, want) {
		t.Errorf("checkpoints %q, want %q", ckpts, want)
	}
	rows, _ = pool.Query(ctx, `SELECT thread_id || ' ' || channel || '@' || version || ' ' || convert_from(blob, 'UTF8') FROM checkpoint_blobs ORDER BY 1`)
	blobs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	// a@1 is first written by op 0: op 3's value of the same version is
	// not stored (first value wins).
	if want := []string{`r a@1 "a1"`, `r a@2 "a2"`}; !slices.Equal(blobs, want) {
		t.Errorf("values %q, want %q", blobs, want)
	}
	rows, _ = pool.Query(ctx, `SELECT task_id || ' ' || convert_from(blob, 'UTF8') FROM checkpoint_writes ORDER BY 1`)
	writes, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{`t1 "w1"`, `t2 "w3"`}; !slices.Equal(writes, want) {
		t.Errorf("writes %q, want %q", writes, want)
	}
}

// TestWriteGroupRowsFailure: when the rows' batch fails — here one
// put's document is not JSON — every op of it is sent again one by one:
// the op at fault gets its own error and stores nothing, the others are
// stored.
func TestWriteGroupRowsFailure(t *testing.T) {
	s, pool, log := tracedSaver(t)
	ctx := t.Context()
	ops := make([]checkpointer.GroupOp, 4)
	for i := range ops {
		ops[i] = checkpointer.GroupOp{Put: rowsPut(fmt.Sprint("f", i), "c1", "", "1", `{}`)}
	}
	ops[2].Put.Doc = []byte(`{"v": 4,`)
	errs := s.driver().WriteGroup(ctx, ops)
	for i, err := range errs {
		var pe *pgconn.PgError
		if i == 2 {
			if !errors.As(err, &pe) || pe.Code != "22P02" {
				t.Errorf("op 2 (not JSON): %v, want invalid_text_representation", err)
			}
		} else if err != nil {
			t.Errorf("op %d: %v", i, err)
		}
	}
	sent := log.Take()
	if !slices.Contains(sent, s.q.putCkptRows) {
		t.Errorf("the puts were never sent as rows")
	}
	var threads []string
	rows, _ := pool.Query(ctx, `SELECT thread_id FROM checkpoints ORDER BY 1`)
	threads, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"f0", "f1", "f3"}; !slices.Equal(threads, want) {
		t.Errorf("checkpoints of %q, want %q", threads, want)
	}
}
