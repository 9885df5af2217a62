package sqliteaudit

import (
	"context"
	"database/sql"
)

// MarksBetween returns the marks whose names sort strictly between after
// and below (byte order), in that order, at most limit of them: the rows
// of a kind of mark that vault numbers with a fixed width (erasure
// intents). It only reads: a database without memvault_meta holds none.
func (m meta) MarksBetween(ctx context.Context, after, below string, limit int) ([][2]string, error) {
	var out [][2]string
	err := m.read(ctx, func(tx *sql.Tx) error {
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
		return nil, err
	}
	return out, nil
}
