package pgsaver

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/internal/pgmigrate"
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

// citusInstalledSQL reports whether the citus extension exists in the
// database: it does on a coordinator (and on workers, which memvault is
// never pointed at).
const citusInstalledSQL = `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'citus')`

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
	var ok bool
	if err := db.QueryRow(ctx, citusInstalledSQL).Scan(&ok); err != nil {
		return false
	}
	if ok {
		t.state.Store(2)
	} else {
		t.state.Store(1)
	}
	return ok
}

// distribute makes the tables distributed tables on a Citus coordinator,
// by thread_id and colocated with checkpoints; on plain PostgreSQL, or when
// they are distributed already, it does nothing after a few reads. Citus
// copies the rows a table already holds into its shards, so a database set
// up before Citus was installed is distributed by the next Setup; the
// coordinator's own copy of those rows is then truncated
// (truncate_local_data_after_distributing_table): left there, invisible to
// every query, it would outlive a DeleteThread or an erasure. It runs in
// one transaction holding memvault's setup lock (pgmigrate.LockKey), so
// that concurrent Setups distribute each table once and the three tables
// are distributed together or not at all.
func (s *Saver) distribute(ctx context.Context) error {
	if !s.topo.distributed(ctx, s.db) {
		return nil
	}
	todo, err := s.undistributed(ctx, s.db)
	if err != nil || len(todo) == 0 {
		return err
	}
	return pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, pgmigrate.LockKey); err != nil {
			return fmt.Errorf("citus: lock: %w", err)
		}
		todo, err := s.undistributed(ctx, tx) // again, under the lock
		if err != nil {
			return err
		}
		for _, table := range todo {
			colocate := "default"
			if table != s.q.checkpoints {
				colocate = s.q.checkpoints
			}
			if _, err := tx.Exec(ctx, `SELECT create_distributed_table($1::regclass, $2, colocate_with => $3)`,
				table, citusColumn, colocate); err != nil {
				return fmt.Errorf("citus: distribute %s by %s: %w", table, citusColumn, err)
			}
		}
		for _, table := range todo {
			if _, err := tx.Exec(ctx, `SELECT truncate_local_data_after_distributing_table($1::regclass)`, table); err != nil {
				return fmt.Errorf("citus: truncate the coordinator's copy of %s: %w", table, err)
			}
		}
		return nil
	})
}

// undistributed returns the saver's tables that are not distributed yet,
// checkpoints first (the others are colocated with it).
func (s *Saver) undistributed(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) ([]string, error) {
	var todo []string
	for _, table := range []string{s.q.checkpoints, s.q.blobs, s.q.writes} {
		var done bool
		if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = $1::regclass)`,
			table).Scan(&done); err != nil {
			return nil, fmt.Errorf("citus: is %s distributed: %w", table, err)
		}
		if !done {
			todo = append(todo, table)
		}
	}
	return todo, nil
}
