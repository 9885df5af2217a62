package vault

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/memvault/memvault/config"
)

// ErrNotFound is wrapped by Open's error when Config.MustExist is set and
// the database, or its key or audit table, does not exist.
var ErrNotFound = errors.New("vault: database not found")

// mustExistFile fails unless path is an existing file. what says which
// file it is ("SQLite database", "key table", "audit trail") and name the
// variable that sets it.
func mustExistFile(what, name, path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s file %q (%s) does not exist", ErrNotFound, what, path, name)
	case err != nil:
		return fmt.Errorf("vault: %s file %q (%s): %w", what, path, name, err)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%w: %s %q (%s) is not a file", ErrNotFound, what, path, name)
	}
	return nil
}

// sqliteMustExist checks, before Open touches anything, that the SQLite
// files the configuration uses exist: the database, the key file when
// per-subject keys keep it in SQLite, the audit file when the trail is on.
// A private in-memory database has nothing to find.
func sqliteMustExist(c config.Config) error {
	mem := c.DBPath == sqliteMemory
	if !mem {
		if err := mustExistFile("SQLite database", "MEMVAULT_DB", c.DBPath); err != nil {
			return err
		}
	}
	// The same defaults as openKeys and openAudit: beside the database
	// file, or in memory beside an in-memory database.
	if c.SubjectsOn() && c.KeyDSN == "" && (c.KeyTable != "" || !mem) {
		path := c.KeyTable
		if path == "" {
			path = c.DBPath + ".keys"
		}
		if err := mustExistFile("key table", "MEMVAULT_KEY_TABLE", path); err != nil {
			return err
		}
	}
	if c.Audit && (c.AuditTable != "" || !mem) {
		path := c.AuditTable
		if path == "" {
			path = c.DBPath + ".audit"
		}
		if err := mustExistFile("audit trail", "MEMVAULT_AUDIT_TABLE", path); err != nil {
			return err
		}
	}
	return nil
}

// registeredMustExist checks, before anything is opened, the SQLite files
// a registered backend's configuration names apart from its data: the key
// table (MEMVAULT_KEY_TABLE, when no MEMVAULT_KEY_DSN) and the audit trail
// (MEMVAULT_AUDIT_TABLE). Without it a mistyped path would become a new,
// empty key table or trail.
func registeredMustExist(c config.Config) error {
	if c.SubjectsOn() && c.KeyDSN == "" {
		if err := mustExistFile("key table", "MEMVAULT_KEY_TABLE", c.KeyTable); err != nil {
			return err
		}
	}
	if c.Audit {
		if err := mustExistFile("audit trail", "MEMVAULT_AUDIT_TABLE", c.AuditTable); err != nil {
			return err
		}
	}
	return nil
}

// pgMustExist fails unless one of tables exists in schema ("" = the
// search_path) of pool's database. what says what the tables hold and name
// the variable that sets the schema.
func pgMustExist(ctx context.Context, pool *pgxpool.Pool, what, name, schema string, tables ...string) error {
	for _, t := range tables {
		id := pgx.Identifier{t}
		if schema != "" {
			id = pgx.Identifier{schema, t}
		}
		var found bool
		if err := pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, id.Sanitize()).Scan(&found); err != nil {
			return fmt.Errorf("vault: look up the %s: %w", what, err)
		}
		if found {
			return nil
		}
	}
	where := "on the search_path"
	if schema != "" {
		where = fmt.Sprintf("in schema %q", schema)
	}
	return fmt.Errorf("%w: PostgreSQL database %q has no %s %s (%s; looked for %v)", ErrNotFound, pool.Config().ConnConfig.Database, what, where, name, tables)
}
