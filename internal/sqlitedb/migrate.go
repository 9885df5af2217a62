package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

const createMigrations = `CREATE TABLE IF NOT EXISTS memvault_migrations (
	component TEXT NOT NULL,
	v INTEGER NOT NULL,
	applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
	PRIMARY KEY (component, v)
)`

// ErrBadMigrations is returned by Load for a directory of migration files
// that is not numbered 0, 1, ... without gaps.
var ErrBadMigrations = errors.New("sqlitedb: bad migration files")

// Load reads a component's schema steps from dir in fsys (an embed.FS):
// files named "<version>.sql" or "<version>_<words>.sql", numbered from 0
// without gaps; file N is step N, recorded as memvault_migrations(component,
// v = N) once applied. A file may hold several statements, and SQL
// comments: SQLite keeps a CREATE statement's text from its object's name
// on in sqlite_master, so comments before a statement are not part of the
// schema. Other files are ignored. The text is used as written (only
// surrounding blank space trimmed): whitespace inside a CREATE statement is
// part of sqlite_master.sql.
func Load(fsys fs.FS, dir string) ([]string, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadMigrations, err)
	}
	byVersion := map[int]string{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, _, _ := strings.Cut(strings.TrimSuffix(name, ".sql"), "_")
		v, err := strconv.Atoi(num)
		if err != nil || v < 0 || num != strings.TrimLeft(num, "+-") {
			return nil, fmt.Errorf("%w: %s: not <version>.sql", ErrBadMigrations, path.Join(dir, name))
		}
		if _, dup := byVersion[v]; dup {
			return nil, fmt.Errorf("%w: %s: version %d twice", ErrBadMigrations, dir, v)
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadMigrations, err)
		}
		text := strings.TrimSpace(string(b))
		if text == "" {
			return nil, fmt.Errorf("%w: %s: empty", ErrBadMigrations, path.Join(dir, name))
		}
		byVersion[v] = text
	}
	if len(byVersion) == 0 {
		return nil, fmt.Errorf("%w: %s: no <version>.sql files", ErrBadMigrations, dir)
	}
	out := make([]string, len(byVersion))
	for v, text := range byVersion {
		if v >= len(out) {
			return nil, fmt.Errorf("%w: %s: versions are not 0..%d", ErrBadMigrations, dir, len(out)-1)
		}
		out[v] = text
	}
	return out, nil
}

// MustLoad is Load for the migration files a package embeds: they are part
// of the build, checked by the package's tests, so a defect in them is a
// programming error, like a bad regexp.MustCompile pattern.
func MustLoad(fsys fs.FS, dir string) []string {
	steps, err := Load(fsys, dir)
	if err != nil {
		panic(err)
	}
	return steps
}

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
	return d.Write(ctx, func(tx *sql.Tx) error { return apply(ctx, tx, component, steps) })
}

// MigrateTx is Migrate inside a transaction the caller began and ends: the
// schema and its records commit or roll back with the caller's other
// writes. It takes the database's write lock at once (a deferred
// transaction whose snapshot is older than another connection's commit
// then fails with SQLITE_BUSY rather than apply a step twice). Run it on a
// transaction of the connection that writes (DB.Write's, or a wrapped
// *sql.DB's); memvault_migrations is created in the transaction too when
// missing.
func MigrateTx(ctx context.Context, tx *sql.Tx, component string, steps []string) error {
	if _, err := tx.ExecContext(ctx, createMigrations); err != nil {
		return fmt.Errorf("sqlitedb: migrate %s: %w", component, err)
	}
	if _, err := tx.ExecContext(ctx, lockStmt); err != nil {
		return fmt.Errorf("sqlitedb: migrate %s: %w", component, err)
	}
	return apply(ctx, tx, component, steps)
}

// apply runs the steps above component's highest recorded version in tx,
// recording each.
func apply(ctx context.Context, tx *sql.Tx, component string, steps []string) error {
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
