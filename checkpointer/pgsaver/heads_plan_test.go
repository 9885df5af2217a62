package pgsaver

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// TestHeadsOrphansOnePass runs the heads statement of a prune (the
// checkpoints of a thread and its orphan write sets) under EXPLAIN ANALYZE
// on a thread of Prune's benchmark shape (100 checkpoints, 2 writes each),
// with every join method the planner may pick, custom and generic plans,
// and checks that each plan node runs once and that no join pairs rows
// only to filter the pairs out: the orphans are found in one pass over the
// thread's writes and checkpoints, whatever the planner guesses. They were
// an anti join of the writes with the checkpoints, which PostgreSQL ran,
// in the generic plan pgx's prepared statement gets after five executions
// in BenchmarkPruneKeepLatest/per-thread, as a merge join on thread_id
// alone: every write met every checkpoint of its thread (20 000 pairs for
// 100 checkpoints), most of a one-thread prune's server time.
func TestHeadsOrphansOnePass(t *testing.T) {
	const threads, per = 50, 100
	ctx := context.Background()
	pool := pgtest.Pool(t)
	s, err := New(pool, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO ` + s.q.checkpoints + ` (thread_id, checkpoint_ns, checkpoint_id, checkpoint, metadata)
SELECT 't' || th, '', lpad(c::text, 8, '0'), jsonb_build_object('v', 4, 'channel_versions', jsonb_build_object('messages', c::text)), '{}'
FROM generate_series(1, $1::int) th, generate_series(1, $2::int) c`,
		`INSERT INTO ` + s.q.writes + ` (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
SELECT 't' || th, '', lpad(c::text, 8, '0'), 'task', '', i, 'messages', 'json', '\x2231'
FROM generate_series(1, $1::int) th, generate_series(1, $2::int) c, generate_series(0, 1) i`,
	} {
		if _, err := pool.Exec(ctx, q, threads, per); err != nil {
			t.Fatalf("seed: %v\n%s", err, q)
		}
	}
	if _, err := pool.Exec(ctx, `ANALYZE `+s.q.checkpoints+`, `+s.q.writes); err != nil {
		t.Fatal(err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "PREPARE heads AS "+s.q.headsThreads[true]); err != nil {
		t.Fatal(err)
	}
	for _, plan := range []string{"force_custom_plan", "force_generic_plan"} {
		for _, joins := range []string{"", "enable_hashjoin = off", "enable_hashjoin = off; SET enable_mergejoin = off", "enable_hashjoin = off; SET enable_nestloop = off"} {
			if _, err := conn.Exec(ctx, "RESET ALL; SET plan_cache_mode = "+plan); err != nil {
				t.Fatal(err)
			}
			if joins != "" {
				if _, err := conn.Exec(ctx, "SET "+joins); err != nil {
					t.Fatal(err)
				}
			}
			var raw []byte
			if err := conn.QueryRow(ctx, `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE heads('{t7}', NULL)`).Scan(&raw); err != nil {
				t.Fatal(err)
			}
			var plans []struct{ Plan planNode }
			if err := json.Unmarshal(raw, &plans); err != nil || len(plans) != 1 {
				t.Fatalf("explain: %v\n%s", err, raw)
			}
			if bad := plans[0].Plan.repeated(); bad != "" {
				t.Errorf("%s %s: %s\n%s", plan, joins, bad, raw)
			}
		}
	}
	if _, err := conn.Exec(ctx, "RESET ALL"); err != nil {
		t.Fatal(err)
	}
}

// planNode is a node of a JSON plan, with what repeated reads.
type planNode struct {
	NodeType            string     `json:"Node Type"`
	Loops               float64    `json:"Actual Loops"`
	RemovedByJoinFilter float64    `json:"Rows Removed by Join Filter"`
	Plans               []planNode `json:"Plans"`
}

// repeated describes the first node under n (n included) that ran more
// than once or that paired rows only to filter the pairs out, or is "".
func (n planNode) repeated() string {
	switch {
	case n.Loops > 1:
		return n.NodeType + " ran " + ftoa(n.Loops) + " times"
	case n.RemovedByJoinFilter > 0:
		return n.NodeType + " filtered out " + ftoa(n.RemovedByJoinFilter) + " pairs"
	}
	for _, c := range n.Plans {
		if bad := c.repeated(); bad != "" {
			return bad
		}
	}
	return ""
}

func ftoa(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}
