package pgaudit

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// MarksBetween returns the marks whose names sort strictly between after
// and below (byte order: COLLATE "C", whatever the column's collation), in
// that order, at most limit of them: the rows of a kind of mark that vault
// numbers with a fixed width (erasure intents). It only reads: a schema
// without memvault_meta holds none.
func (m meta) MarksBetween(ctx context.Context, after, below string, limit int) ([][2]string, error) {
	tbl, exists, err := m.table(ctx)
	if err != nil || !exists {
		return nil, err
	}
	rows, err := m.pool.Query(ctx, `SELECT name, value FROM `+tbl+` WHERE name COLLATE "C" > $1 AND name COLLATE "C" < $2 ORDER BY name COLLATE "C" LIMIT $3`, after, below, limit)
	if err != nil {
		return nil, fmt.Errorf("audit/pgaudit: meta: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]string, error) {
		var kv [2]string
		err := r.Scan(&kv[0], &kv[1])
		return kv, err
	})
	if err != nil {
		return nil, fmt.Errorf("audit/pgaudit: meta: %w", err)
	}
	return out, nil
}
