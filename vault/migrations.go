package vault

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"

	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/internal/sqlitedb"
)

// Migration is one migration table's highest applied version.
type Migration struct {
	Table   string `json:"table"`
	Version int    `json:"version"`
	// Indexes are the indexes a backend without versioned migrations
	// (MongoDB) keeps on Table, a collection; Version is 0 then.
	Indexes []string `json:"indexes,omitempty"`
}

// Migrations reports the applied schema versions (Open has already run
// Setup, so this is the state after migrating).
func (h *Handle) Migrations(ctx context.Context) ([]Migration, error) {
	var out []Migration
	if h.external != nil {
		if h.external.Migrations == nil {
			return nil, nil
		}
		return h.external.Migrations(ctx)
	}
	if h.Backend == config.BackendPostgres {
		// Each component knows its own tables (internal/pgmigrate).
		type versioned interface {
			MigrationVersions(ctx context.Context) (map[string]int, error)
		}
		for _, c := range []any{h.Saver, h.Store} {
			v, ok := c.(versioned)
			if !ok {
				continue
			}
			m, err := v.MigrationVersions(ctx)
			if err != nil {
				return nil, fmt.Errorf("vault: %w", err)
			}
			for _, t := range slices.Sorted(maps.Keys(m)) {
				out = append(out, Migration{Table: t, Version: m[t]})
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
