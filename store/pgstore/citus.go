package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/internal/pgmigrate"
)

// Citus (distributed PostgreSQL). On a Citus coordinator Setup distributes
// store by prefix and store_vectors by prefix, colocated with store: all
// the items of one namespace, and their vectors, live on one shard, so a
// statement naming one namespace (Get, Put, Delete, a Search or a listing
// of one whole namespace) routes to one shard, and the foreign key of
// store_vectors, which holds prefix, is enforced inside each shard. What
// names no single namespace fans out to every shard: a Search or listing
// under a shorter prefix, ListNamespaces, DeletePrefix of a shorter prefix
// and the TTL sweep.
//
// memvault_store_embedder (one row, read and written by Setup only) and the
// migration tables stay local tables of the coordinator: no statement joins
// them with the distributed tables, and a local table keeps plain
// PostgreSQL's semantics (its one INSERT ... ON CONFLICT; a reference table
// would make that write a two-phase commit to every node, for nothing).
//
// The statements are those of plain PostgreSQL, with two differences on
// Citus (driver.distributed): statements that take their rows from arrays
// repeat their prefixes for shard pruning (driver.prune), and the item
// lookup of a nearest-neighbour search goes without its LIMIT 1
// (annQuery).

// citusColumn is the distribution column of store and store_vectors.
const citusColumn = "prefix"

// citusInstalledSQL reports whether the citus extension exists in the
// database: it does on a coordinator (and on workers, which memvault is
// never pointed at).
const citusInstalledSQL = `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'citus')`

// citusDistributedSQL reports whether table $1 is a Citus distributed
// table (a row in pg_dist_partition, which exists only with Citus).
const citusDistributedSQL = `SELECT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = to_regclass($1))`

// citusTables are the tables Setup distributes, in order (store_vectors
// is colocated with store, which must be distributed first).
func (s *Store) citusTables() []string {
	if s.d.index != nil {
		return []string{s.d.t.store, s.d.t.vectors}
	}
	return []string{s.d.t.store}
}

// distribute makes store and store_vectors distributed tables on a Citus
// coordinator (see citusColumn); on plain PostgreSQL, or when they are
// distributed already, it does nothing after two reads. Citus copies the
// rows a table already holds into its shards, so a database set up before
// Citus was installed is distributed by the next Setup; the coordinator's
// own copy of those rows is then truncated
// (truncate_local_data_after_distributing_table), as Citus advises, so
// that it takes no space. It runs in one transaction holding memvault's
// setup lock (pgmigrate.LockKey), so that concurrent Setups distribute
// each table once, and a table is distributed with its colocated one or
// not at all.
func (s *Store) distribute(ctx context.Context) error {
	var citus bool
	if err := s.d.db.QueryRow(ctx, citusInstalledSQL).Scan(&citus); err != nil {
		return fmt.Errorf("postgres: setup: is citus installed: %w", err)
	}
	if !citus {
		s.d.citus.Store(2)
		return nil
	}
	s.d.citus.Store(1)
	todo, err := s.undistributed(ctx, s.d.db)
	if err != nil || len(todo) == 0 {
		return err
	}
	err = pgx.BeginFunc(ctx, s.d.db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, pgmigrate.LockKey); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		todo, err := s.undistributed(ctx, tx) // again, under the lock
		if err != nil {
			return err
		}
		for _, table := range todo {
			colocate := "default"
			if table != s.d.t.store {
				colocate = s.d.t.store
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
	if err != nil {
		return fmt.Errorf("postgres: setup: %w", err)
	}
	return nil
}

// undistributed returns the tables of citusTables that are not distributed
// yet.
func (s *Store) undistributed(ctx context.Context, q Querier) ([]string, error) {
	var todo []string
	for _, table := range s.citusTables() {
		var done bool
		if err := q.QueryRow(ctx, citusDistributedSQL, table).Scan(&done); err != nil {
			return nil, fmt.Errorf("postgres: setup: citus: is %s distributed: %w", table, err)
		}
		if !done {
			todo = append(todo, table)
		}
	}
	return todo, nil
}
