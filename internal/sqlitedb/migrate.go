package sqlitedb

import (
	"context"
	"database/sql"
	"fmt"
)

const createMigrations = `CREATE TABLE IF NOT EXISTS memvault_migrations (
	component TEXT NOT NULL,
	v INTEGER NOT NULL,
	applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
	PRIMARY KEY (component, v)
)`

// Migrate applies the steps of component that the database has not
// recorded yet, in order, and records each as memvault_migrations(component,
// v) with v its index in steps. A step may hold several statements. All
// pending steps run in one write transaction: concurrent callers (in this
// or another process) apply each step exactly once. Versions beyond steps
// (recorded by a newer build, whose additions are backwards compatible) are
// left alone.
func (d *DB) Migrate(ctx context.Context, component string, steps []string) error {
	s, err := d.get()
	if err != nil {
		return err
	}
	// Outside a transaction: the wrapped-database lock statement needs it.
	if _, err := s.w.ExecContext(ctx, createMigrations); err != nil {
		return fmt.Errorf("sqlitedb: migrate %s: %w", component, err)
	}
	return d.Write(ctx, func(tx *sql.Tx) error {
		var cur int
		if err := tx.QueryRowContext(ctx,
			`SELECT coalesce(max(v), -1) FROM memvault_migrations WHERE component = ?`, component).Scan(&cur); err != nil {
			return fmt.Errorf("sqlitedb: migrate %s: %w", component, err)
		}
		for v := cur + 1; v < len(steps); v++ {
			if _, err := tx.ExecContext(ctx, steps[v]); err != nil {
				return fmt.Errorf("sqlitedb: migrate %s to v%d: %w", component, v, err)
			}
			if _, err := tx.ExecContext(ctx,
				`INSERT INTO memvault_migrations (component, v) VALUES (?, ?)`, component, v); err != nil {
				return fmt.Errorf("sqlitedb: migrate %s to v%d: %w", component, v, err)
			}
		}
		return nil
	})
}

// Version returns the highest recorded version of component, or -1.
func (d *DB) Version(ctx context.Context, component string) (int, error) {
	s, err := d.get()
	if err != nil {
		return 0, err
	}
	var v int
	err = s.r.QueryRowContext(ctx,
		`SELECT coalesce(max(v), -1) FROM memvault_migrations WHERE component = ?`, component).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("sqlitedb: version of %s: %w", component, err)
	}
	return v, nil
}
