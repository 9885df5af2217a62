package vault

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/internal/sqlitedb"
)

// metadataThreadIDs returns the threads of the data database with a
// checkpoint whose metadata names subject under key (the subjects'
// ThreadMetadataKey), from the metadata column alone: nothing is
// decrypted. A forget with subjects named in metadata reads the threads
// bound to the subject in its key table, but a process running on a copy
// of the key table binds threads in the copy only; their checkpoints,
// which name the subject, are in the one data database (session 33:
// before, Forget left such a thread, and the process on the copy read it
// afterwards). SQLite and PostgreSQL only: other backends return none.
func (h *Handle) metadataThreadIDs(ctx context.Context, key, subject string) ([]string, error) {
	switch {
	case h.Pool != nil:
		// The saver's table, in MEMVAULT_SCHEMA when one is set (the
		// pool's search_path does not name it), and a string-exact match
		// (`->>` would read the number 42 as the subject "42"; SQLite's
		// scan below takes text only, as keys.BindThread does).
		table := "checkpoints"
		if h.schema != "" {
			table = pgx.Identifier{h.schema, "checkpoints"}.Sanitize()
		}
		rows, err := h.Pool.Query(ctx, `SELECT DISTINCT thread_id FROM `+table+` WHERE metadata @> jsonb_build_object($1::text, $2::text)`, key, subject)
		if err != nil {
			return nil, fmt.Errorf("list threads by metadata: %w", err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return nil, fmt.Errorf("list threads by metadata: %w", err)
		}
		return ids, nil
	case h.Backend == config.BackendSQLite && h.dbPath != "" && h.dbPath != sqliteMemory:
		db, err := sqlitedb.Open(h.dbPath, sqlitedb.Options{})
		if err != nil {
			return nil, fmt.Errorf("list threads by metadata: %w", err)
		}
		defer db.Close()
		var ids []string
		err = db.Read(ctx, func(tx *sql.Tx) error {
			// Metadata that is not JSON names no one (and must not
			// fail the erasure).
			rows, err := tx.QueryContext(ctx, `SELECT DISTINCT c.thread_id FROM checkpoints c,
				json_each(CASE WHEN json_valid(c.metadata) THEN c.metadata ELSE '{}' END) j
				WHERE j.key = ? AND j.type = 'text' AND j.value = ?`, key, subject)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var id string
				if err := rows.Scan(&id); err != nil {
					return err
				}
				ids = append(ids, id)
			}
			return rows.Err()
		})
		if err != nil {
			return nil, fmt.Errorf("list threads by metadata: %w", err)
		}
		return ids, nil
	}
	return nil, nil
}
