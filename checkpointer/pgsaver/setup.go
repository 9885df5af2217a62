package pgsaver

import (
	"context"
	"embed"
	"fmt"

	"github.com/memvault/memvault/internal/pgdb"
	"github.com/memvault/memvault/internal/pgmigrate"
)

// migrations holds the DDL Setup runs, one statement per file:
//
//   - migrations/checkpoint/NN.sql is LangGraph's MIGRATIONS list
//     (langgraph-checkpoint-postgres 3.x), statement for statement: file NN
//     is recorded as v = NN in checkpoint_migrations, so Python's and JS's
//     setup() see a database set up by memvault as current, and the other
//     way round. 00 creates the tracking table; 05 is LangGraph's no-op
//     placeholder. The files diff against the reference as they are.
//   - migrations/memvault/NN.sql are memvault's own schema changes, tracked
//     in memvault_checkpoint_migrations so LangGraph's numbering stays
//     untouched. 01 indexes checkpoints by (thread_id, checkpoint_id):
//     listing a thread across all its namespaces (ListOptions.AllNamespaces),
//     newest first and paged with Before, then reads the index in order and
//     stops at Limit, where the primary key (thread_id, checkpoint_ns,
//     checkpoint_id) would make PostgreSQL read and sort every checkpoint of
//     the thread for each page. Deliberately absent: an index on
//     checkpoint_writes(thread_id, checkpoint_ns, checkpoint_id) (the primary
//     key starts with those columns) and a GIN index on checkpoints.metadata
//     (filters almost always come with a thread id; the GIN entries would tax
//     every Put).
//
//go:embed migrations
var migrations embed.FS

// migrationTables are the tracking tables of the checkpointer's migrations.
var migrationTables = []string{"checkpoint_migrations", "memvault_checkpoint_migrations"}

func (s *Saver) migrationSets() ([]pgmigrate.Set, error) {
	vars := map[string]string{
		"checkpoint_migrations":          pgdb.Ident(s.q.schema, "checkpoint_migrations"),
		"memvault_checkpoint_migrations": pgdb.Ident(s.q.schema, "memvault_checkpoint_migrations"),
		"checkpoints":                    s.q.checkpoints,
		"checkpoint_blobs":               s.q.blobs,
		"checkpoint_writes":              s.q.writes,
	}
	var sets []pgmigrate.Set
	for i, dir := range []string{"checkpoint", "memvault"} {
		stmts, err := pgmigrate.Load(migrations, "migrations/"+dir, vars)
		if err != nil {
			return nil, err
		}
		sets = append(sets, pgmigrate.Set{Table: migrationTables[i], Statements: stmts})
	}
	return sets, nil
}

// Setup creates or upgrades the tables: LangGraph's migrations 0..9 (those a
// database set up by Python or JS LangGraph already has are skipped), then
// memvault's own. It is idempotent and safe to call from several processes
// at once: the run holds memvault's one setup advisory lock
// (internal/pgmigrate) on one connection from start to end, and a database
// already migrated is checked without waiting for that lock.
//
// CREATE INDEX CONCURRENTLY cannot run inside a transaction, so Setup runs
// outside one, on a dedicated connection from a pool or on the given
// connection. When the Saver was built over a pgx.Tx, Setup runs inside that
// transaction instead, creating the indexes without CONCURRENTLY (which
// LangGraph's setup cannot do) and holding a transaction-scoped lock. Over
// a *pgx.Conn, or any DB other than a *pgxpool.Pool and a pgx.Tx, Setup runs
// on the DB directly, which must then be a single connection.
//
// An index that an interrupted CREATE INDEX CONCURRENTLY left invalid is
// dropped and built again rather than taken as done.
//
// On a Citus coordinator (the citus extension exists in the database),
// Setup then distributes the three tables by thread_id, colocated; rows
// already there move into the shards. See docs/scale-out.md.
func (s *Saver) Setup(ctx context.Context) error {
	sets, err := s.migrationSets()
	if err != nil {
		return fmt.Errorf("postgres: setup: %w", err)
	}
	if err := pgmigrate.Run(ctx, s.db, s.q.schema, sets...); err != nil {
		return fmt.Errorf("postgres: setup: %w", err)
	}
	// On Citus, the tables are distributed by thread_id (see the package doc).
	if err := s.topo.Setup(ctx, s.db, "thread_id", s.q.checkpoints, s.q.blobs, s.q.writes); err != nil {
		return fmt.Errorf("postgres: setup: %w", err)
	}
	return nil
}

// MigrationVersions reports the highest applied version of each of the
// checkpointer's migration tables (checkpoint_migrations, LangGraph's, and
// memvault_checkpoint_migrations); a table not created yet is left out.
func (s *Saver) MigrationVersions(ctx context.Context) (map[string]int, error) {
	v, err := pgmigrate.Versions(ctx, s.db, s.q.schema, migrationTables...)
	if err != nil {
		return nil, fmt.Errorf("postgres: migration versions: %w", err)
	}
	return v, nil
}
