package sqliteaudit

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/memvault/memvault/internal/sqlitedb"
)

// MarksBetween returns the marks whose names sort strictly between after
// and below (byte order), in that order, at most limit of them: the rows
// of a kind of mark that vault numbers with a fixed width (erasure
// intents). It only reads: a database without memvault_meta holds none.
func (m meta) MarksBetween(ctx context.Context, after, below string, limit int) ([][2]string, error) {
	db, err := sqlitedb.Open(m.path, sqlitedb.Options{})
	if err != nil {
		return nil, fmt.Errorf("audit/sqliteaudit: meta: %w", err)
	}
	defer db.Close()
	var out [][2]string
	err = db.Read(ctx, func(tx *sql.Tx) error {
		var tables int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'memvault_meta'`).Scan(&tables); err != nil || tables == 0 {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT name, value FROM memvault_meta WHERE name > ? AND name < ? ORDER BY name LIMIT ?`, after, below, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var name, value string
			if err := rows.Scan(&name, &value); err != nil {
				return err
			}
			out = append(out, [2]string{name, value})
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("audit/sqliteaudit: meta: %w", err)
	}
	return out, nil
}
