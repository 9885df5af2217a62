package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// langGraphMigrations is LangGraph's MIGRATIONS list (langgraph-checkpoint-
// postgres 3.x), statement for statement: entry i is recorded as v = i in
// checkpoint_migrations, so Python's and JS's setup() see a database set up
// by memvault as current, and the other way round. Entry 0 creates the
// tracking table; entry 5 is LangGraph's no-op placeholder.
var langGraphMigrations = []string{
	`CREATE TABLE IF NOT EXISTS {checkpoint_migrations} (
    v INTEGER PRIMARY KEY
);`,
	`CREATE TABLE IF NOT EXISTS {checkpoints} (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    parent_checkpoint_id TEXT,
    type TEXT,
    checkpoint JSONB NOT NULL,
    metadata JSONB NOT NULL DEFAULT '{}',
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
);`,
	`CREATE TABLE IF NOT EXISTS {checkpoint_blobs} (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    channel TEXT NOT NULL,
    version TEXT NOT NULL,
    type TEXT NOT NULL,
    blob BYTEA,
    PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
);`,
	`CREATE TABLE IF NOT EXISTS {checkpoint_writes} (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    channel TEXT NOT NULL,
    type TEXT,
    blob BYTEA NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);`,
	`ALTER TABLE {checkpoint_blobs} ALTER COLUMN blob DROP not null;`,
	`SELECT 1;`,
	`CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoints_thread_id_idx ON {checkpoints}(thread_id);`,
	`CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoint_blobs_thread_id_idx ON {checkpoint_blobs}(thread_id);`,
	`CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoint_writes_thread_id_idx ON {checkpoint_writes}(thread_id);`,
	`ALTER TABLE {checkpoint_writes} ADD COLUMN IF NOT EXISTS task_path TEXT NOT NULL DEFAULT '';`,
}

// memvaultMigrations are memvault's own schema changes, tracked in
// memvault_checkpoint_migrations so LangGraph's numbering stays untouched.
// Entry 0 creates the tracking table.
//
// Entry 1 indexes checkpoints by (thread_id, checkpoint_id): listing a
// thread across all its namespaces (ListOptions.AllNamespaces), newest first
// and paged with Before, then reads the index in order and stops at Limit,
// where the primary key (thread_id, checkpoint_ns, checkpoint_id) would make
// PostgreSQL read and sort every checkpoint of the thread for each page.
//
// Deliberately absent: an index on checkpoint_writes(thread_id,
// checkpoint_ns, checkpoint_id) — the primary key starts with those columns
// and already serves the pending-writes lookup — and a GIN index on
// checkpoints.metadata: filters almost always come with a thread id, whose
// index narrows the scan to the thread, and the GIN entries would tax every
// Put (see the package documentation).
var memvaultMigrations = []string{
	`CREATE TABLE IF NOT EXISTS {memvault_checkpoint_migrations} (
    v INTEGER PRIMARY KEY
);`,
	`CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoints_thread_id_checkpoint_id_idx ON {checkpoints}(thread_id, checkpoint_id);`,
}

// Setup creates or upgrades the tables: LangGraph's migrations 0..9 (those a
// database set up by Python or JS LangGraph already has are skipped), then
// memvault's own. It is idempotent and safe to call from several processes
// at once: the run holds a PostgreSQL advisory lock (keyed by schema) on one
// connection from start to end.
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
func (s *Saver) Setup(ctx context.Context) (err error) {
	var conn DB
	switch db := s.db.(type) {
	case pgx.Tx:
		conn = db
		if _, err := db.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, s.lockKey()); err != nil {
			return fmt.Errorf("postgres: setup: lock: %w", err)
		}
	case *pgxpool.Pool:
		c, err := db.Acquire(ctx)
		if err != nil {
			return fmt.Errorf("postgres: setup: acquire connection: %w", err)
		}
		defer c.Release()
		conn = c
	default:
		conn = s.db
	}
	if !s.inTx {
		if err := s.lock(ctx, conn); err != nil {
			return fmt.Errorf("postgres: setup: lock: %w", err)
		}
		defer func() {
			// Unlock even when ctx is done: a pooled connection must not go
			// back to the pool holding the lock.
			uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			if _, uerr := conn.Exec(uctx, `SELECT pg_advisory_unlock($1)`, s.lockKey()); uerr != nil {
				if pc, ok := conn.(*pgxpool.Conn); ok {
					_ = pc.Conn().Close(uctx) // a closed connection is dropped by the pool
				}
				if err == nil {
					err = fmt.Errorf("postgres: setup: unlock: %w", uerr)
				}
			}
		}()
	}
	if s.q.schema != "" {
		// Checked first: CREATE SCHEMA IF NOT EXISTS needs the CREATE
		// privilege on the database even when the schema exists.
		var exists bool
		if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, s.q.schema).Scan(&exists); err != nil {
			return fmt.Errorf("postgres: setup: look up schema: %w", err)
		}
		if !exists {
			if _, err := conn.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{s.q.schema}.Sanitize()); err != nil {
				return fmt.Errorf("postgres: setup: create schema: %w", err)
			}
		}
	}
	if err := s.migrate(ctx, conn, "checkpoint_migrations", langGraphMigrations); err != nil {
		return err
	}
	return s.migrate(ctx, conn, "memvault_checkpoint_migrations", memvaultMigrations)
}

// migrate runs list[0] (which creates the tracking table), then every entry
// above the highest recorded version, recording each, as LangGraph's setup
// does.
func (s *Saver) migrate(ctx context.Context, conn DB, table string, list []string) error {
	r := strings.NewReplacer(
		"{"+table+"}", ident(s.q.schema, table),
		"{checkpoints}", s.q.checkpoints,
		"{checkpoint_blobs}", s.q.blobs,
		"{checkpoint_writes}", s.q.writes,
	)
	tbl := ident(s.q.schema, table)
	if _, err := conn.Exec(ctx, r.Replace(list[0])); err != nil {
		return fmt.Errorf("postgres: setup: %s v0: %w", table, err)
	}
	version := -1
	var v *int32
	err := conn.QueryRow(ctx, `SELECT v FROM `+tbl+` ORDER BY v DESC LIMIT 1`).Scan(&v)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return fmt.Errorf("postgres: setup: read %s: %w", table, err)
	case v != nil:
		version = int(*v)
	}
	for i := version + 1; i < len(list); i++ {
		stmt := r.Replace(list[i])
		if s.inTx {
			stmt = strings.Replace(stmt, "INDEX CONCURRENTLY", "INDEX", 1)
		} else if err := s.dropInvalidIndex(ctx, conn, stmt); err != nil {
			return fmt.Errorf("postgres: setup: %s v%d: %w", table, i, err)
		}
		if err := execMigration(ctx, conn, stmt); err != nil {
			return fmt.Errorf("postgres: setup: %s v%d: %w", table, i, err)
		}
		if _, err := conn.Exec(ctx, `INSERT INTO `+tbl+` (v) VALUES ($1) ON CONFLICT (v) DO NOTHING`, i); err != nil {
			return fmt.Errorf("postgres: setup: record %s v%d: %w", table, i, err)
		}
	}
	return nil
}

var concurrentIndex = regexp.MustCompile(`INDEX CONCURRENTLY IF NOT EXISTS (\w+) ON`)

// dropInvalidIndex drops the index stmt creates if a CREATE INDEX
// CONCURRENTLY that failed or was interrupted left it behind invalid: IF NOT
// EXISTS would otherwise skip it and record the migration as done with an
// index PostgreSQL never uses.
func (s *Saver) dropInvalidIndex(ctx context.Context, conn DB, stmt string) error {
	m := concurrentIndex.FindStringSubmatch(stmt)
	if m == nil {
		return nil
	}
	var invalid bool
	err := conn.QueryRow(ctx, `SELECT NOT i.indisvalid FROM pg_index i
JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relname = $1 AND n.nspname = coalesce(nullif($2, ''), current_schema())`, m[1], s.q.schema).Scan(&invalid)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && !invalid) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = conn.Exec(ctx, `DROP INDEX CONCURRENTLY IF EXISTS `+ident(s.q.schema, m[1]), pgx.QueryExecModeSimpleProtocol)
	return err
}

// execMigration runs one DDL statement with the simple protocol (DDL has no
// parameters and must not be cached as a prepared statement).
func execMigration(ctx context.Context, conn DB, stmt string) error {
	_, err := conn.Exec(ctx, stmt, pgx.QueryExecModeSimpleProtocol)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42P07" && strings.Contains(stmt, "CONCURRENTLY") {
		// duplicate_table: a concurrent CREATE INDEX CONCURRENTLY from a
		// process not holding our lock (LangGraph's setup) got there first.
		return nil
	}
	return err
}

// lock takes Setup's session advisory lock on conn. It polls with
// pg_try_advisory_lock instead of blocking in pg_advisory_lock: CREATE INDEX
// CONCURRENTLY waits for every transaction older than it to end, including
// a session blocked in pg_advisory_lock waiting for the CREATE INDEX's own
// session, which PostgreSQL reports as a deadlock.
func (s *Saver) lock(ctx context.Context, conn DB) error {
	wait := 5 * time.Millisecond
	for {
		var ok bool
		if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, s.lockKey()).Scan(&ok); err != nil {
			return err
		}
		if ok {
			return nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, 250*time.Millisecond)
	}
}

// lockKey is the advisory lock Setup holds: one per schema.
func (s *Saver) lockKey() int64 {
	h := fnv.New64a()
	h.Write([]byte("memvault/checkpointer/postgres/setup\x00"))
	h.Write([]byte(s.q.schema))
	return int64(h.Sum64())
}
