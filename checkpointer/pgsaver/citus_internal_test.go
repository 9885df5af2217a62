package pgsaver

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// taskCount reads the number of shard tasks from a Citus plan
// ("Task Count: 4").
var taskCount = regexp.MustCompile(`Task Count: (\d+)`)

// TestCitusStatementsRouteToOneShard EXPLAINs the saver's statements on a
// Citus coordinator whose tables Setup distributed: every statement that
// names one thread runs as one task on one shard; a listing across threads
// runs on every shard, each shard reading no more than the limit's rows.
// The counts are logged (docs/scale-out.md quotes them).
func TestCitusStatementsRouteToOneShard(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.CitusSchema(t)
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
	allNS, allNSArgs, err := d.buildList(checkpointer.DriverQuery{Thread: "t7", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	d.topo = s.topo // a coordinator (Setup asked): the Citus form across threads
	spread, spreadArgs, err := d.buildList(checkpointer.DriverQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	one, all := "1", strconv.Itoa(pgtest.CitusShardCount)
	cases := []struct {
		name, sql string
		args      []any
		// tasks is every step's task count; "" accepts Citus's
		// "pull to coordinator" INSERT … SELECT, which evaluates the
		// SELECT (an unnest of the parameters) on the coordinator and
		// sends the rows to the one shard of their thread.
		tasks string
	}{
		{"get_tuple latest", s.q.getLatest, []any{"t7", ""}, one},
		{"get_tuple by id", s.q.getByID, []any{"t7", "", "00000012"}, one},
		{"list a thread", list, listArgs, one},
		{"list a thread, all namespaces", allNS, allNSArgs, one},
		{"put", s.q.putCkpt, []any{"t7", "", "00000099", "00000025", "{}", "{}", []string{"messages"}, []string{"99"},
			[]string{"json"}, [][]byte{[]byte("1")}, []bool{false}, true}, one},
		{"put_writes", s.q.insertWrites, []any{"t7", "", "00000025", "task2", "", []int32{0}, []string{"messages"}, []string{"json"}, [][]byte{[]byte("1")}}, ""},
		{"heads of a thread", s.q.headsThreads[true], []any{[]string{"t7"}, nil}, one},
		// Citus runs FOR UPDATE only routed to one shard: the removals
		// lock each thread in a statement of its own.
		{"lock one thread", s.q.lock, []any{[]string{"t7"}, []string{"t7"}, []string{""}, []string{"00000012"}}, one},
		{"lock a thread", s.q.lockThreads, []any{[]string{"t7"}}, one},
		{"remove", s.q.remove, []any{[]string{"t7"}, []string{"t7"}, []string{""}, []string{"00000012"}, []string{}, []string{}, []string{}}, one},
		{"delete_thread", s.q.deleteThreads, []any{[]string{"t7"}}, one},
		{"collect values", s.q.gcBlobs, []any{[]string{"t7"}, []string{""}}, one},
		{"collect a thread's values", s.q.gcThreads, []any{[]string{"t7"}}, one},
		{"list across threads", spread, spreadArgs, all},
	}
	for _, c := range cases {
		var plan strings.Builder
		// The simple protocol: pgx writes the arguments into the text, so
		// Citus plans for the values (with parameters, it cannot EXPLAIN
		// put's INSERT … SELECT, though it runs it).
		args := append([]any{pgx.QueryExecModeSimpleProtocol}, c.args...)
		rows, err := pool.Query(ctx, "EXPLAIN "+c.sql, args...)
		if err != nil {
			t.Errorf("%s: EXPLAIN: %v", c.name, err)
			continue
		}
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan.WriteString(line + "\n")
		}
		if err := rows.Err(); err != nil {
			t.Errorf("%s: EXPLAIN: %v", c.name, err)
			continue
		}
		var counts []string
		for _, m := range taskCount.FindAllStringSubmatch(plan.String(), -1) {
			counts = append(counts, m[1])
		}
		t.Logf("%-32s tasks %v", c.name, counts)
		if c.sql == spread && strings.Count(plan.String(), "Limit") < 2 {
			// Each shard sorts its own checkpoints and builds the values
			// of its first 10 only; the coordinator merges 4 × 10 rows.
			t.Errorf("%s: the limit is not pushed down to the shards:\n%s", c.name, plan.String())
		}
		if c.tasks == "" {
			if !strings.Contains(plan.String(), "pull to coordinator") {
				t.Errorf("%s: want an INSERT … SELECT pulled to the coordinator:\n%s", c.name, plan.String())
			}
			continue
		}
		if len(counts) == 0 {
			t.Errorf("%s: no distributed task in the plan:\n%s", c.name, plan.String())
		}
		for _, n := range counts {
			if n != c.tasks {
				t.Errorf("%s: a step runs %s tasks, want %s:\n%s", c.name, n, c.tasks, plan.String())
				break
			}
		}
	}
}

// TestCitusSetupDistributes: Setup distributes the three tables by
// thread_id in one colocation group; a database whose tables are not
// distributed (set up before Citus) is distributed by the next Setup with
// its rows, which read back the same; Setup again is a no-op.
func TestCitusSetupDistributes(t *testing.T) {
	ctx := context.Background()
	pool, schema := pgtest.CitusSchema(t)
	s, err := New(pool, Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	distributed := func() (tables, groups int) {
		t.Helper()
		err := pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT colocationid) FROM pg_dist_partition
WHERE logicalrelid IN ($1::regclass, $2::regclass, $3::regclass) AND column_to_column_name(logicalrelid, partkey) = 'thread_id'`,
			s.q.checkpoints, s.q.blobs, s.q.writes).Scan(&tables, &groups)
		if err != nil {
			t.Fatal(err)
		}
		return tables, groups
	}
	if n, g := distributed(); n != 3 || g != 1 {
		t.Fatalf("after Setup: %d tables distributed by thread_id in %d colocation groups, want 3 in 1", n, g)
	}

	cfg := checkpointer.Config{ThreadID: "before-citus"}
	cp := &checkpointer.Checkpoint{V: 4, ID: "00000001", ChannelValues: map[string]any{"k": "v"}, ChannelVersions: map[string]string{"k": "1"}}
	if _, err := s.Put(ctx, cfg, cp, checkpointer.Metadata{}, map[string]string{"k": "1"}); err != nil {
		t.Fatal(err)
	}
	for _, tbl := range []string{s.q.writes, s.q.blobs, s.q.checkpoints} {
		if _, err := pool.Exec(ctx, "SELECT undistribute_table($1)", tbl); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := distributed(); n != 0 {
		t.Fatalf("undistribute_table left %d tables distributed", n)
	}
	for range 2 {
		if err := s.Setup(ctx); err != nil {
			t.Fatal(err)
		}
		if n, g := distributed(); n != 3 || g != 1 {
			t.Fatalf("Setup of a database set up before Citus: %d tables distributed in %d groups, want 3 in 1", n, g)
		}
	}
	got, err := s.GetTuple(ctx, cfg)
	if err != nil || got == nil || got.Checkpoint.ChannelValues["k"] != "v" {
		t.Fatalf("GetTuple after distributing = %+v, %v; want the checkpoint put before", got, err)
	}
	// The coordinator keeps no copy of the rows it moved into the shards:
	// invisible to queries, such a copy would outlive DeleteThread and an
	// erasure.
	for _, tbl := range []string{s.q.checkpoints, s.q.blobs, s.q.writes} {
		var size int64
		if err := pool.QueryRow(ctx, "SELECT pg_relation_size($1::regclass)", tbl).Scan(&size); err != nil {
			t.Fatal(err)
		}
		if size != 0 {
			t.Errorf("%s: the coordinator keeps %d bytes of the rows it distributed", tbl, size)
		}
	}
}
