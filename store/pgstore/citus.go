package pgstore

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/internal/pgcitus"
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

// citusTables are the tables Setup distributes, in order (store_vectors
// is colocated with store, which must be distributed first).
func (s *Store) citusTables() []string {
	if s.d.index != nil {
		return []string{s.d.t.store, s.d.t.vectors}
	}
	return []string{s.d.t.store}
}

// distribute makes store and store_vectors distributed tables on a Citus
// coordinator (see citusColumn; pgcitus.Distribute: existing rows move into
// the shards and leave no copy on the coordinator); on plain PostgreSQL, or
// when they are distributed already, it only reads.
func (s *Store) distribute(ctx context.Context) error {
	citus, err := pgcitus.Installed(ctx, s.d.db)
	if err != nil {
		return fmt.Errorf("postgres: setup: is citus installed: %w", err)
	}
	if !citus {
		s.d.citus.Store(2)
		return nil
	}
	s.d.citus.Store(1)
	if err := pgcitus.Distribute(ctx, s.d.db, citusColumn, s.citusTables()...); err != nil {
		return fmt.Errorf("postgres: setup: %w", err)
	}
	return nil
}
