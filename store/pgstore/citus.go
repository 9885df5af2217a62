package pgstore

import (
	"context"
	"fmt"
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
// Citus (driver.topo): statements that take their rows from arrays repeat
// their prefixes for shard pruning (pgcitus.Topology.ShardFilter), and the item
// lookup of a nearest-neighbour search goes without its LIMIT 1
// (annQuery).

// citusColumn is the distribution column of store and store_vectors.
const citusColumn = "prefix"

// citusTables are the tables Setup distributes, in order (store_vectors
// is colocated with store, which must be distributed first).
// store_vectors is named even without an index: an earlier Setup with one
// may have created it, and left local its foreign key to store would stop
// store's distribution (XX000 "cannot truncate a table referenced in a
// foreign key constraint by a local table"); pgcitus.Distribute leaves it
// out when it does not exist.
func (s *Store) citusTables() []string {
	return []string{s.d.t.store, s.d.t.vectors}
}

// distribute makes store and store_vectors distributed tables on a Citus
// coordinator (see citusColumn; pgcitus.Distribute: existing rows move into
// the shards and leave no copy on the coordinator); on plain PostgreSQL, or
// when they are distributed already, it only reads.
func (s *Store) distribute(ctx context.Context) error {
	if err := s.d.topo.Setup(ctx, s.d.db, citusColumn, s.citusTables()...); err != nil {
		return fmt.Errorf("postgres: setup: %w", err)
	}
	return nil
}
