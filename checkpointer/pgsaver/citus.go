package pgsaver

import (
	"context"
)

// Citus (distributed PostgreSQL) support. On a Citus coordinator, Setup
// distributes the three tables by thread_id, colocated, so that every row
// of a thread lives on one shard: a statement that names one thread routes
// to that shard, and a transaction on one thread is local to one worker.
// The statements are those of plain PostgreSQL, written so that Citus can
// run them (see queries.go), but for two forms: a list across threads
// (queries.selectTupleSpread) and the removals' row locks, one statement
// per thread (queries.lockOne, pgcitus.EachValue). Whether the database is
// a coordinator is asked once per Saver (pgcitus.Topology).

// citusColumn is the distribution column of the three tables.
const citusColumn = "thread_id"

// distribute makes the three tables distributed tables on a Citus
// coordinator, by thread_id, colocated with checkpoints (pgcitus.Distribute:
// existing rows move into the shards and leave no copy on the coordinator);
// on plain PostgreSQL, or when they are distributed already, it only reads.
func (s *Saver) distribute(ctx context.Context) error {
	return s.topo.Setup(ctx, s.db, citusColumn, s.q.checkpoints, s.q.blobs, s.q.writes)
}
