package pgcitus_test

import (
	"context"
	"reflect"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/internal/pgcitus"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestInstalled(t *testing.T) {
	ctx := context.Background()
	if ok, err := pgcitus.Installed(ctx, pgtest.Pool(t)); err != nil || ok {
		t.Errorf("Installed on plain PostgreSQL = %v, %v; want false", ok, err)
	}
	pool, _ := pgtest.CitusSchema(t)
	if ok, err := pgcitus.Installed(ctx, pool); err != nil || !ok {
		t.Errorf("Installed on a Citus coordinator = %v, %v; want true", ok, err)
	}
}

// TestDistribute: tables holding rows are distributed together by the
// column, colocated with the first, by Setups racing each other; the rows
// stay readable, the coordinator keeps no copy of them, and a second call
// changes nothing.
func TestDistribute(t *testing.T) {
	ctx := context.Background()
	pool, schema := pgtest.CitusSchema(t)
	a, b := pgx.Identifier{schema, "a"}.Sanitize(), pgx.Identifier{schema, "b"}.Sanitize()
	for _, sql := range []string{
		"CREATE TABLE a (k text, v int, PRIMARY KEY (k, v))",
		"CREATE TABLE b (k text, w int, PRIMARY KEY (k, w))",
		"INSERT INTO a SELECT 'k' || i, i FROM generate_series(1, 50) i",
		"INSERT INTO b SELECT 'k' || i, i FROM generate_series(1, 50) i",
	} {
		if _, err := pool.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Go(func() { errs[i] = pgcitus.Distribute(ctx, pool, "k", a, b) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("Distribute (3 at once): %v", err)
		}
	}
	var tables, groups int
	if err := pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT colocationid) FROM pg_dist_partition
WHERE logicalrelid IN ($1::regclass, $2::regclass) AND column_to_column_name(logicalrelid, partkey) = 'k'`, a, b).Scan(&tables, &groups); err != nil {
		t.Fatal(err)
	}
	if tables != 2 || groups != 1 {
		t.Fatalf("%d tables distributed by k in %d colocation groups, want 2 in 1", tables, groups)
	}
	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM a JOIN b USING (k)").Scan(&n); err != nil || n != 50 {
		t.Fatalf("rows after distributing: %d, %v; want 50", n, err)
	}
	for _, tbl := range []string{a, b} {
		var size int64
		if err := pool.QueryRow(ctx, "SELECT pg_relation_size($1::regclass)", tbl).Scan(&size); err != nil {
			t.Fatal(err)
		}
		if size != 0 {
			t.Errorf("%s: the coordinator keeps %d bytes of the rows it distributed", tbl, size)
		}
	}
	if err := pgcitus.Distribute(ctx, pool, "k", a, b); err != nil {
		t.Fatalf("Distribute again: %v", err)
	}
}

// TestTopology: the topology is asked once and remembered; Setup only asks
// on plain PostgreSQL and distributes on a coordinator, leaving out a
// table that does not exist; ShardFilter is empty but on a coordinator;
// a nil Topology is plain PostgreSQL's.
func TestTopology(t *testing.T) {
	ctx := context.Background()
	var plain pgcitus.Topology
	pool := pgtest.Pool(t)
	if plain.Known() || plain.Distributed(ctx, pool) || plain.Known() {
		t.Error("plain PostgreSQL reads as a Citus coordinator")
	}
	if err := plain.Setup(ctx, pool, "k", "no_such_table"); err != nil {
		t.Errorf("Setup on plain PostgreSQL: %v", err)
	}
	var none *pgcitus.Topology
	if none.Distributed(ctx, pool) || none.Known() {
		t.Error("a nil Topology reads as a Citus coordinator")
	}
	if f := plain.ShardFilter("a.k", "$1::text[]"); f != "" {
		t.Errorf("ShardFilter on plain PostgreSQL = %q, want none", f)
	}
	cpool, schema := pgtest.CitusSchema(t)
	if _, err := cpool.Exec(ctx, "CREATE TABLE a (k text PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	var citus pgcitus.Topology
	a, absent := pgx.Identifier{schema, "a"}.Sanitize(), pgx.Identifier{schema, "absent"}.Sanitize()
	if err := citus.Setup(ctx, cpool, "k", a, absent); err != nil {
		t.Fatalf("Setup with a table that does not exist: %v", err)
	}
	if !citus.Known() || !citus.Distributed(ctx, cpool) {
		t.Error("a Citus coordinator reads as plain PostgreSQL")
	}
	var n int
	if err := cpool.QueryRow(ctx, "SELECT count(*) FROM pg_dist_partition WHERE logicalrelid = $1::regclass", a).Scan(&n); err != nil || n != 1 {
		t.Errorf("a distributed: %d, %v", n, err)
	}
	if f := citus.ShardFilter("a.k", "$1::text[]"); f != " AND a.k = ANY($1::text[])" {
		t.Errorf("ShardFilter on Citus = %q", f)
	}
	forms := pgcitus.Forms{"plain", "citus"}
	if plain.Form(forms) != "plain" || none.Form(forms) != "plain" || citus.Form(forms) != "citus" {
		t.Errorf("Form: plain %q, nil %q, Citus %q", plain.Form(forms), none.Form(forms), citus.Form(forms))
	}

	// QueueLock: one statement on plain PostgreSQL; on Citus one per
	// value, in sorted order, with that value's rows (in their order).
	rows := [][]string{{"b", "a", "b", "a"}, {"1", "2", "3", "4"}}
	for _, c := range []struct {
		topo *pgcitus.Topology
		cols [][]string
		want [][]any
	}{
		{&plain, rows, [][]any{{[]string{"a", "b"}, rows[0], rows[1]}}},
		{&plain, nil, [][]any{{[]string{"a", "b"}}}},
		{&citus, rows, [][]any{{[]string{"a"}, []string{"a", "a"}, []string{"2", "4"}}, {[]string{"b"}, []string{"b", "b"}, []string{"1", "3"}}}},
		{&citus, nil, [][]any{{[]string{"a"}}, {[]string{"b"}}}},
	} {
		b := &pgx.Batch{}
		c.topo.QueueLock(b, "LOCK", []string{"a", "b"}, c.cols...)
		var got [][]any
		for _, q := range b.QueuedQueries {
			got = append(got, q.Arguments)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("QueueLock (Citus %v, %d columns): %v, want %v", c.topo.Known(), len(c.cols), got, c.want)
		}
	}
}
