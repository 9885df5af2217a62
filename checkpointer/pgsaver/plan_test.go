package pgsaver

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// planThreads × planPerThread checkpoints, each with 2 new values and 3
// writes: enough rows that a sequential scan of any table costs more than
// an index probe, so the plans below are the ones a large table gets.
const (
	planThreads   = 400
	planPerThread = 25
)

// seedPlanTables fills the saver's tables with rows of the shape the saver
// writes (the content does not matter to the planner, the distribution
// does) and refreshes the statistics.
func seedPlanTables(t *testing.T, ctx context.Context, pool *pgxpool.Pool, q queries) {
	t.Helper()
	stmts := []string{
		`INSERT INTO ` + q.checkpoints + ` (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
SELECT 't' || th, '', lpad(c::text, 8, '0'), CASE WHEN c > 1 THEN lpad((c - 1)::text, 8, '0') END,
	jsonb_build_object('v', 4, 'id', lpad(c::text, 8, '0'), 'channel_versions',
		jsonb_build_object('messages', c::text, 'scratch', c::text, 'context', '1')),
	jsonb_build_object('source', 'loop', 'step', c, 'run_id', 'run-' || th)
FROM generate_series(1, $1::int) th, generate_series(1, $2::int) c`,
		`INSERT INTO ` + q.blobs + ` (thread_id, checkpoint_ns, channel, version, type, blob)
SELECT 't' || th, '', ch, c::text, 'json', convert_to(repeat('x', 200), 'UTF8')
FROM generate_series(1, $1::int) th, generate_series(1, $2::int) c, unnest(array['messages', 'scratch']) ch`,
		`INSERT INTO ` + q.blobs + ` (thread_id, checkpoint_ns, channel, version, type, blob)
SELECT 't' || th, '', 'context', '1', 'json', '\x7b7d' FROM generate_series(1, $1::int) th WHERE $2::int > 0`,
		`INSERT INTO ` + q.writes + ` (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
SELECT 't' || th, '', lpad(c::text, 8, '0'), 'task', '', i, 'messages', 'json', '\x2231'
FROM generate_series(1, $1::int) th, generate_series(1, $2::int) c, generate_series(0, 2) i`,
	}
	for _, s := range stmts {
		if _, err := pool.Exec(ctx, s, planThreads, planPerThread); err != nil {
			t.Fatalf("seed: %v\n%s", err, s)
		}
	}
	for _, tbl := range []string{q.checkpoints, q.blobs, q.writes} {
		if _, err := pool.Exec(ctx, "VACUUM ANALYZE "+tbl); err != nil {
			t.Fatal(err)
		}
	}
}

// lit is the text of an array literal, as EXECUTE takes it.
type lit string

// seqScan matches a sequential scan of one of the saver's tables in a
// text plan ("Seq Scan on checkpoints c", "Seq Scan on x.checkpoint_blobs b").
var seqScan = regexp.MustCompile(`Seq Scan on (\S+\.)?"?(checkpoints|checkpoint_blobs|checkpoint_writes)"?\b`)

// TestQueryPlansUseIndexes EXPLAINs the saver's own statements (from its
// query set, so the test follows the code) over a few thousand checkpoints
// and checks that none reads a table sequentially and that each probes the
// index it was written for, with the plan PostgreSQL picks for the
// parameters (custom) and the one it may cache for any (generic): pgx
// prepares every statement, and after five executions PostgreSQL may
// switch to the generic plan.
func TestQueryPlansUseIndexes(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	s, err := New(pool, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	seedPlanTables(t, ctx, pool, s.q)

	d := &driver{q: &s.q}
	ns := ""
	list, listArgs, err := d.buildList(checkpointer.DriverQuery{Thread: "t7", NS: &ns, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	before, beforeArgs, err := d.buildList(checkpointer.DriverQuery{Thread: "t7", NS: &ns, Limit: 10, Before: "00000020"})
	if err != nil {
		t.Fatal(err)
	}
	allNS, allNSArgs, err := d.buildList(checkpointer.DriverQuery{Thread: "t7", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	const ckpt = "checkpoints_pkey|checkpoints_thread_id_checkpoint_id_idx"
	const ckptOrThread = ckpt + "|checkpoints_thread_id_idx"
	cases := []struct {
		name string
		sql  string
		args []any
		// want are the indexes the plan must use, each as alternatives
		// separated by "|". A checkpoint is found by the primary key or by
		// (thread_id, checkpoint_id): all rows of a namespace-less thread
		// have checkpoint_ns '', so both probe the same few entries.
		want []string
	}{
		{"get_tuple latest", s.q.getLatest, []any{"t7", ""}, []string{ckpt, "checkpoint_blobs_pkey", "checkpoint_writes_pkey"}},
		{"get_tuple by id", s.q.getByID, []any{"t7", "", "00000012"}, []string{ckpt, "checkpoint_blobs_pkey", "checkpoint_writes_pkey"}},
		{"list limit 10", list, listArgs, []string{ckpt, "checkpoint_blobs_pkey", "checkpoint_writes_pkey"}},
		{"list before", before, beforeArgs, []string{ckpt}},
		{"list all namespaces", allNS, allNSArgs, []string{"checkpoints_thread_id_checkpoint_id_idx"}},
		{"put", s.q.putCkpt, []any{"t7", "", "00000099", "00000025", "{}", "{}", lit("{messages}"), lit("{99}"), lit("{json}"), lit(`{"\\x31"}`), lit("{f}"), lit("true")},
			[]string{ckpt}},
		{"put_writes", s.q.insertWrites, []any{"t7", "", "00000025", "task2", "", lit("{0}"), lit("{messages}"), lit("{json}"), lit(`{"\\x31"}`)}, nil},
		{"put_writes upsert", s.q.upsertWrites, []any{"t7", "", "00000025", "task2", "", lit("{0}"), lit("{messages}"), lit("{json}"), lit(`{"\\x31"}`)}, nil},
		{"delete_thread", s.q.deleteThreads, []any{lit("{t7}")}, nil},
		{"delete_thread values", s.q.gcThreads, []any{lit("{t7}")}, nil},
		// Heads, locks and removals probe the checkpoints of their
		// threads through one of its indexes.
		{"heads of a thread", s.q.headsThreads[false], []any{lit("{t7}"), lit("NULL")}, []string{ckptOrThread}},
		{"heads of a thread, orphans", s.q.headsThreads[true], []any{lit("{t7}"), lit("NULL")}, []string{ckptOrThread, "checkpoint_writes_pkey|checkpoint_writes_thread_id_idx"}},
		{"heads of a namespace", s.q.headsThreads[false], []any{lit("{t7}"), ""}, []string{ckptOrThread}},
		{"lock", s.q.lock, []any{lit("{t7}"), lit("{t7}"), lit("{\"\"}"), lit("{00000012}")}, []string{ckptOrThread}},
		{"lock a thread's checkpoints", s.q.lockThreads, []any{lit("{t7}")}, []string{ckptOrThread}},
		{"remove", s.q.remove, []any{lit("{t7}"), lit("{t7}"), lit("{\"\"}"), lit("{00000012}"), lit("{}"), lit("{}"), lit("{}")},
			[]string{ckptOrThread, "checkpoint_writes_pkey|checkpoint_writes_thread_id_idx"}},
		// The collection is bounded by the thread, not the table.
		{"collect values", s.q.gcBlobs, []any{lit("{t7}"), lit("{\"\"}")}, []string{"checkpoint_blobs_pkey|checkpoint_blobs_thread_id_idx"}},
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		if _, err := conn.Exec(ctx, "SET plan_cache_mode = "+mode); err != nil {
			t.Fatal(err)
		}
		for i, c := range cases {
			t.Run(mode+"/"+c.name, func(t *testing.T) {
				// PREPARE, then EXPLAIN EXECUTE: the plan a prepared
				// statement gets under this plan_cache_mode.
				name := fmt.Sprintf("plan_%d", i)
				if _, err := conn.Exec(ctx, "PREPARE "+name+" AS "+c.sql); err != nil {
					t.Fatalf("prepare: %v\n%s", err, c.sql)
				}
				defer conn.Exec(ctx, "DEALLOCATE "+name)
				params := make([]string, len(c.args))
				for j, a := range c.args {
					switch a := a.(type) {
					case lit:
						params[j] = "'" + string(a) + "'"
						if a == "NULL" {
							params[j] = "NULL"
						}
					case string:
						params[j] = "'" + strings.ReplaceAll(a, "'", "''") + "'"
					default:
						t.Fatalf("argument %d: %T", j, a)
					}
				}
				// EXECUTE takes its parameters as SQL literals, not as bound
				// parameters of the EXPLAIN.
				rows, err := conn.Query(ctx, "EXPLAIN EXECUTE "+name+"("+strings.Join(params, ", ")+")")
				if err != nil {
					t.Fatalf("explain: %v", err)
				}
				var plan strings.Builder
				for rows.Next() {
					var line string
					if err := rows.Scan(&line); err != nil {
						t.Fatal(err)
					}
					plan.WriteString(line + "\n")
				}
				if err := rows.Err(); err != nil {
					t.Fatalf("explain: %v", err)
				}
				p := plan.String()
				if m := seqScan.FindString(p); m != "" {
					t.Errorf("%s: %s\n%s", c.name, m, p)
				}
				for _, alt := range c.want {
					found := false
					for _, idx := range strings.Split(alt, "|") {
						found = found || strings.Contains(p, " "+idx+" ")
					}
					if !found {
						t.Errorf("%s: plan uses none of %s\n%s", c.name, alt, p)
					}
				}
			})
		}
	}
}
