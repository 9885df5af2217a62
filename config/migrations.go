package config

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/memvault/memvault/internal/sqlitedb"
)

// Migration is one migration table's highest applied version.
type Migration struct {
	Table   string `json:"table"`
	Version int    `json:"version"`
}

// Migrations reports the applied schema versions (Open has already run
// Setup, so this is the state after migrating).
func (h *Handle) Migrations(ctx context.Context) ([]Migration, error) {
	var out []Migration
	if h.Backend == BackendPostgres {
		for _, t := range []string{"checkpoint_migrations", "memvault_checkpoint_migrations", "store_migrations", "vector_migrations"} {
			var v *int
			err := h.Pool.QueryRow(ctx, "SELECT max(v) FROM "+h.qualify(t)).Scan(&v)
			if err != nil {
				if isUndefinedTable(err) {
					continue
				}
				return nil, fmt.Errorf("config: %s: %w", t, err)
			}
			if v != nil {
				out = append(out, Migration{Table: t, Version: *v})
			}
		}
		return out, nil
	}
	db, err := sql.Open(sqlitedb.DriverName, "file:"+h.dbPath+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT component, max(v) FROM memvault_migrations GROUP BY component ORDER BY component`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var m Migration
		if err := rows.Scan(&m.Table, &m.Version); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

func (h *Handle) qualify(table string) string {
	if h.schema == "" {
		return pgx.Identifier{table}.Sanitize()
	}
	return pgx.Identifier{h.schema, table}.Sanitize()
}

func isUndefinedTable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "42P01"
}
