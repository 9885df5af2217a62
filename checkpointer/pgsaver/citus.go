package pgsaver

import (
	"context"
	"sync/atomic"

	"github.com/memvault/memvault/internal/pgcitus"
)

// Citus (distributed PostgreSQL) support. On a Citus coordinator, Setup
// distributes the three tables by thread_id, colocated, so that every row
// of a thread lives on one shard: a statement that names one thread routes
// to that shard, and a transaction on one thread is local to one worker.
// The statements are those of plain PostgreSQL, written so that Citus can
// run them (see queries.go); the one exception is a list across threads
// (topology.distributed).

// citusColumn is the distribution column of the three tables.
const citusColumn = "thread_id"

// topology remembers whether the database is a Citus coordinator, asked
// once per Saver, the first time a statement needs to know.
type topology struct {
	state atomic.Int32 // 0 not asked yet, 1 plain PostgreSQL, 2 Citus
}

// distributed reports whether db is a Citus coordinator. A failed check is
// not remembered and reads as plain PostgreSQL: the statement that asked
// then fails or succeeds on its own.
func (t *topology) distributed(ctx context.Context, db DB) bool {
	if t == nil {
		return false
	}
	switch t.state.Load() {
	case 1:
		return false
	case 2:
		return true
	}
	ok, err := pgcitus.Installed(ctx, db)
	if err != nil {
		return false
	}
	if ok {
		t.state.Store(2)
	} else {
		t.state.Store(1)
	}
	return ok
}

// distribute makes the three tables distributed tables on a Citus
// coordinator, by thread_id, colocated with checkpoints (pgcitus.Distribute:
// existing rows move into the shards and leave no copy on the coordinator);
// on plain PostgreSQL, or when they are distributed already, it only reads.
func (s *Saver) distribute(ctx context.Context) error {
	if !s.topo.distributed(ctx, s.db) {
		return nil
	}
	return pgcitus.Distribute(ctx, s.db, citusColumn, s.q.checkpoints, s.q.blobs, s.q.writes)
}
