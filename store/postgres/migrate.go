package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// storeMigrations are LangGraph's MIGRATIONS of PostgresStore, recorded as
// versions 0..3 in store_migrations. The DDL creates exactly what Python's
// setup() creates, so either side's setup is a no-op after the other's.
func storeMigrations(t tables) []string {
	return []string{
		`CREATE TABLE IF NOT EXISTS ` + t.store + ` (
    prefix text NOT NULL,
    key text NOT NULL,
    value jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (prefix, key)
)`,
		`CREATE INDEX CONCURRENTLY IF NOT EXISTS store_prefix_idx ON ` + t.store + ` USING btree (prefix text_pattern_ops)`,
		`ALTER TABLE ` + t.store + `
    ADD COLUMN IF NOT EXISTS expires_at TIMESTAMP WITH TIME ZONE,
    ADD COLUMN IF NOT EXISTS ttl_minutes INT`,
		`CREATE INDEX IF NOT EXISTS idx_store_expires_at ON ` + t.store + ` (expires_at) WHERE expires_at IS NOT NULL`,
	}
}

// vectorMigrations are LangGraph's VECTOR_MIGRATIONS, recorded as versions
// 0..2 in vector_migrations. Migration 2 is "" for a flat index: it is then
// skipped and not recorded, as in LangGraph.
func vectorMigrations(t tables, sp *indexSpec) []string {
	return []string{
		`DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') THEN
        CREATE EXTENSION vector;
    END IF;
END $$`,
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
    prefix text NOT NULL,
    key text NOT NULL,
    field_name text NOT NULL,
    embedding %s(%d),
    created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (prefix, key, field_name),
    FOREIGN KEY (prefix, key) REFERENCES %s (prefix, key) ON DELETE CASCADE
)`, t.vectors, sp.vecType, sp.dims, t.store),
		sp.indexDDL(t),
	}
}

// Setup creates or migrates the tables: LangGraph's store migrations, and
// its vector migrations when an index is configured. It runs each statement
// outside a transaction (CREATE INDEX CONCURRENTLY cannot run in one), on
// one connection holding a session advisory lock, so concurrent Setup calls
// from several processes are safe. Setup is idempotent; migrations already
// recorded, by memvault or by LangGraph, are left alone.
func (s *Store) Setup(ctx context.Context) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	run := func(c *pgx.Conn) error { return s.setupConn(ctx, c) }
	switch db := s.db.(type) {
	case *pgxpool.Pool:
		conn, err := db.Acquire(ctx)
		if err != nil {
			return fmt.Errorf("postgres: setup: %w", err)
		}
		defer conn.Release()
		return run(conn.Conn())
	case *pgx.Conn:
		return run(db)
	default:
		return fmt.Errorf("postgres: setup needs a *pgxpool.Pool or *pgx.Conn, not %T", s.db)
	}
}

func (s *Store) setupConn(ctx context.Context, c *pgx.Conn) (err error) {
	lock := advisoryKey("memvault/store/setup/" + s.t.schema)
	// Poll pg_try_advisory_lock rather than wait in pg_advisory_lock: a
	// session waiting inside a statement holds a snapshot, and CREATE INDEX
	// CONCURRENTLY in the session holding the lock would wait for it: a
	// deadlock.
	for {
		var ok bool
		if err := c.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, lock).Scan(&ok); err != nil {
			return fmt.Errorf("postgres: setup: lock: %w", err)
		}
		if ok {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("postgres: setup: lock: %w", ctx.Err())
		case <-time.After(setupLockPoll):
		}
	}
	defer func() {
		// A fresh context: the unlock must run even when ctx is done, or
		// the session keeps the lock until the connection closes.
		if _, uerr := c.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lock); uerr != nil && err == nil {
			err = fmt.Errorf("postgres: setup: unlock: %w", uerr)
		}
	}()
	if s.t.schema != "" {
		if _, err := c.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+s.t.schema); err != nil {
			return fmt.Errorf("postgres: setup: create schema: %w", err)
		}
	}
	if err := migrate(ctx, c, s.t.storeMigrations, storeMigrations(s.t)); err != nil {
		return err
	}
	if s.index != nil {
		if err := migrate(ctx, c, s.t.vectorMigrations, vectorMigrations(s.t, s.index)); err != nil {
			return err
		}
		return s.checkEmbedder(ctx, c)
	}
	return nil
}

// migrate runs the migrations after the highest recorded version, each
// outside a transaction, recording each version after its DDL succeeds
// (LangGraph's order). An empty migration is skipped and not recorded.
func migrate(ctx context.Context, c *pgx.Conn, table string, ms []string) error {
	if _, err := c.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+table+` (v INTEGER PRIMARY KEY)`); err != nil {
		return fmt.Errorf("postgres: setup: %s: %w", table, err)
	}
	version := -1
	err := c.QueryRow(ctx, `SELECT v FROM `+table+` ORDER BY v DESC LIMIT 1`).Scan(&version)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("postgres: setup: read %s: %w", table, err)
	}
	for v := version + 1; v < len(ms); v++ {
		if ms[v] == "" {
			continue
		}
		if _, err := c.Exec(ctx, ms[v]); err != nil {
			return fmt.Errorf("postgres: setup: %s %d: %w", table, v, err)
		}
		if _, err := c.Exec(ctx, `INSERT INTO `+table+` (v) VALUES ($1) ON CONFLICT DO NOTHING`, v); err != nil {
			return fmt.Errorf("postgres: setup: record %s %d: %w", table, v, err)
		}
	}
	return nil
}

// setupLockPoll is how often Setup retries the migration lock.
const setupLockPoll = 50 * time.Millisecond

func advisoryKey(s string) int64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return int64(h.Sum64())
}

// SetupStatements lists the DDL Setup runs on an empty database, one
// statement per line, each migration prefixed with its table and version,
// for review or for applying by hand. Setup skips the migrations a database
// already records.
func (s *Store) SetupStatements() []string {
	var out []string
	add := func(table string, ms []string) {
		out = append(out, oneLine(`CREATE TABLE IF NOT EXISTS `+table+` (v INTEGER PRIMARY KEY)`))
		name := strings.TrimPrefix(table, s.t.schema+".")
		for v, m := range ms {
			if m != "" {
				out = append(out, fmt.Sprintf("%s %d: %s", name, v, oneLine(m)))
			}
		}
	}
	if s.t.schema != "" {
		out = append(out, `CREATE SCHEMA IF NOT EXISTS `+s.t.schema)
	}
	add(s.t.storeMigrations, storeMigrations(s.t))
	if s.index != nil {
		add(s.t.vectorMigrations, vectorMigrations(s.t, s.index))
	}
	return out
}

// oneLine collapses whitespace runs to single spaces.
func oneLine(sql string) string {
	sql = strings.Join(strings.Fields(sql), " ")
	sql = strings.ReplaceAll(sql, "( ", "(")
	return strings.ReplaceAll(sql, " )", ")")
}
