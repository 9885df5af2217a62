package pgtest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// TestCitusCluster checks the cluster CitusSchema gives: a table the test
// distributes gets CitusShardCount shards spread over both workers, rows
// reach them, and a per-test schema exists on every worker.
func TestCitusCluster(t *testing.T) {
	ctx := context.Background()
	pool, schema := pgtest.CitusSchema(t)

	var nodes int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM citus_get_active_worker_nodes()").Scan(&nodes); err != nil {
		t.Fatal(err)
	}
	if nodes != pgtest.CitusWorkers {
		t.Fatalf("active workers = %d, want %d", nodes, pgtest.CitusWorkers)
	}
	if _, err := pool.Exec(ctx, "CREATE TABLE items (thread_id text, v int, PRIMARY KEY (thread_id, v))"); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "SELECT create_distributed_table('items', 'thread_id')"); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "INSERT INTO items SELECT 'thread-' || i, i FROM generate_series(1, 100) i"); err != nil {
		t.Fatal(err)
	}
	qualified := pgx.Identifier{schema, "items"}.Sanitize()
	var shards, ports int
	if err := pool.QueryRow(ctx, "SELECT count(*), count(DISTINCT nodeport) FROM citus_shards WHERE table_name = $1::regclass",
		qualified).Scan(&shards, &ports); err != nil {
		t.Fatal(err)
	}
	if shards != pgtest.CitusShardCount || ports != pgtest.CitusWorkers {
		t.Errorf("items: %d shards on %d nodes, want %d on %d", shards, ports, pgtest.CitusShardCount, pgtest.CitusWorkers)
	}
	var withRows int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM citus_shards WHERE table_name = $1::regclass AND shard_size > 0",
		qualified).Scan(&withRows); err != nil {
		t.Fatal(err)
	}
	if withRows < 2 {
		t.Errorf("rows reached %d shards, want several", withRows)
	}
	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM items").Scan(&n); err != nil || n != 100 {
		t.Fatalf("count(*) = %d, %v; want 100", n, err)
	}
	var onWorkers int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM run_command_on_workers($1) WHERE success AND result = '1'",
		fmt.Sprintf("SELECT count(*) FROM pg_namespace WHERE nspname = '%s'", schema)).Scan(&onWorkers); err != nil {
		t.Fatal(err)
	}
	if onWorkers != pgtest.CitusWorkers {
		t.Errorf("schema %s exists on %d workers, want %d", schema, onWorkers, pgtest.CitusWorkers)
	}
}
