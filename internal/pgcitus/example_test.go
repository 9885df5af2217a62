package pgcitus_test

import (
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/internal/pgcitus"
)

// On a Citus coordinator a statement over several threads' rows runs once
// per thread (the distribution value), each routed to one shard:
// EachGroup splits rows given as columns by their first column, in sorted
// order, so that concurrent writers lock shards in the same order.
func ExampleEachGroup() {
	threads := []string{"t2", "t1", "t2", "t1"}
	keys := []string{"a", "b", "c", "d"}
	pgcitus.EachGroup([][]string{threads, keys}, func(group [][]string) {
		fmt.Println(group[0], group[1])
	})
	// Output:
	// [t1 t1] [b d]
	// [t2 t2] [a c]
}

// Until Distributed has found the citus extension (it needs a server, so
// it is not run here), a Topology is plain PostgreSQL: the plain form of a
// statement, no shard filter, and one locking statement for every row.
func ExampleTopology() {
	var topo pgcitus.Topology
	lookup := pgcitus.Forms{
		`SELECT ... FROM checkpoints c, LATERAL (...) l`,
		`SELECT ... FROM checkpoints c JOIN (...) l USING (thread_id)`,
	}
	fmt.Println(topo.Known(), topo.Form(lookup))
	fmt.Printf("%q\n", topo.ShardFilter("thread_id", "$1"))

	b := &pgx.Batch{}
	topo.QueueLock(b, `SELECT 1 FROM checkpoints WHERE thread_id = ANY($1) FOR UPDATE`, []string{"t2", "t1", "t2"})
	fmt.Println(b.Len(), "statement(s)")
	// Output:
	// false SELECT ... FROM checkpoints c, LATERAL (...) l
	// ""
	// 1 statement(s)
}
