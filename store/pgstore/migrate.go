package pgstore

import (
	"context"
	"embed"
	"fmt"
	"strconv"

	"github.com/memvault/memvault/internal/pgmigrate"
)

// migrations holds the DDL Setup runs, one statement per file, in
// LangGraph's numbering: migrations/store/NN.sql is PostgresStore's
// MIGRATIONS (recorded as v = NN in store_migrations), migrations/vector/
// NN.sql its VECTOR_MIGRATIONS (vector_migrations); the DDL creates exactly
// what Python's setup() creates, so either side's setup is a no-op after
// the other's. vector/02 is the ANN index, empty (skipped and not
// recorded, as in LangGraph) for a flat index. migrations/memvault_vector/
// NN.sql are memvault's own, for an indexed store, tracked in
// memvault_vector_migrations so that LangGraph's numbering stays untouched:
// 00 creates memvault_store_embedder (see checkEmbedder), under the
// migration lock like every other statement (a CREATE TABLE IF NOT EXISTS
// of its own, outside the lock, failed with 23505 when several processes
// opened a fresh database at once).
//
//go:embed migrations
var migrations embed.FS

// migrationSets are the store's migrations for this store's tables and
// index.
func (s *Store) migrationSets() ([]pgmigrate.Set, error) {
	vars := map[string]string{"store": s.d.t.store, "store_vectors": s.d.t.vectors}
	stmts, err := pgmigrate.Load(migrations, "migrations/store", vars)
	if err != nil {
		return nil, err
	}
	sets := []pgmigrate.Set{{Table: "store_migrations", Statements: stmts}}
	if s.d.index != nil {
		vars["vector_type"] = s.d.index.vecType
		vars["dims"] = strconv.Itoa(s.d.index.dims)
		vars["vector_index"] = s.d.index.indexDDL(s.d.t)
		stmts, err := pgmigrate.Load(migrations, "migrations/vector", vars)
		if err != nil {
			return nil, err
		}
		sets = append(sets, pgmigrate.Set{Table: "vector_migrations", Statements: stmts})
		stmts, err = pgmigrate.Load(migrations, "migrations/memvault_vector", map[string]string{"embedder": s.d.t.embedder})
		if err != nil {
			return nil, err
		}
		sets = append(sets, pgmigrate.Set{Table: "memvault_vector_migrations", Statements: stmts})
	}
	return sets, nil
}

// Setup creates or migrates the tables: LangGraph's store migrations, and
// when an index is configured its vector migrations and memvault's
// (memvault_vector_migrations: the embedder's table), with
// internal/pgmigrate, the checkpointer's runner. Over a pool it runs each
// statement outside a transaction (CREATE INDEX CONCURRENTLY cannot run in
// one), on one connection holding memvault's one setup advisory lock, so
// concurrent Setup calls from several processes are safe (a database
// already migrated is checked without waiting for that lock); over a
// pgx.Tx it runs inside the caller's transaction, without CONCURRENTLY. An
// index an interrupted run left invalid is dropped and built again. Setup
// is idempotent; migrations already recorded, by memvault or by LangGraph,
// are left alone.
func (s *Store) Setup(ctx context.Context) error {
	if err := s.b.Check(ctx); err != nil {
		return err
	}
	sets, err := s.migrationSets()
	if err != nil {
		return fmt.Errorf("postgres: setup: %w", err)
	}
	if err := pgmigrate.Run(ctx, s.d.db, s.opts.Schema, sets...); err != nil {
		return fmt.Errorf("postgres: setup: %w", err)
	}
	// On Citus, store and store_vectors are distributed by prefix,
	// colocated (see the package doc; pgcitus.Distribute: existing rows
	// move into the shards and leave no copy on the coordinator).
	// store_vectors is named even without an index: an earlier Setup with
	// one may have created it, and left local its foreign key to store
	// would stop store's distribution (XX000 "cannot truncate a table
	// referenced in a foreign key constraint by a local table");
	// pgcitus.Distribute leaves it out when it does not exist.
	if err := s.d.topo.Setup(ctx, s.d.db, "prefix", s.d.t.store, s.d.t.vectors); err != nil {
		return fmt.Errorf("postgres: setup: %w", err)
	}
	if s.d.index != nil {
		return s.checkEmbedder(ctx, s.d.db)
	}
	return nil
}

// MigrationVersions reports the highest applied version of the store's
// migration tables (store_migrations, vector_migrations,
// memvault_vector_migrations); a table not created yet is left out.
func (s *Store) MigrationVersions(ctx context.Context) (map[string]int, error) {
	v, err := pgmigrate.Versions(ctx, s.d.db, s.opts.Schema, "store_migrations", "vector_migrations", "memvault_vector_migrations")
	if err != nil {
		return nil, fmt.Errorf("postgres: migration versions: %w", err)
	}
	return v, nil
}

// SetupStatements lists the DDL Setup runs on an empty database, one
// statement per line, each migration prefixed with its table and version,
// for review or for applying by hand (pgmigrate.Statements). Setup skips
// the migrations a database already records.
func (s *Store) SetupStatements() []string {
	sets, err := s.migrationSets()
	if err != nil {
		return []string{"-- " + err.Error()} // the embedded files are broken: a build defect
	}
	return pgmigrate.Statements(s.opts.Schema, sets...)
}
