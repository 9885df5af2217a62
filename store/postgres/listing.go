package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/memvault/memvault/store"
)

// listItems is the store core's ListItems hook (items.Hooks): one range
// read of the (prefix, key) primary key, keys compared byte-wise
// (COLLATE "C").
func (s *Store) listItems(ctx context.Context, prefix, after string, limit int, now time.Time) ([]store.Item, error) {
	now = pgTime(now)
	ns := store.ParseNamespace(prefix)
	rows, err := s.db.Query(ctx, `SELECT key, value, created_at, updated_at, expires_at FROM `+s.t.store+`
WHERE prefix = $1 AND key COLLATE "C" > $2 AND (expires_at IS NULL OR expires_at > $3)
ORDER BY key COLLATE "C" LIMIT $4`, prefix, after, now, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: list items: %w", err)
	}
	defer rows.Close()
	var out []store.Item
	for rows.Next() {
		var (
			key              string
			raw              []byte
			created, updated time.Time
			expires          *time.Time
		)
		if err := rows.Scan(&key, &raw, &created, &updated, &expires); err != nil {
			return nil, fmt.Errorf("postgres: list items: %w", err)
		}
		v, err := s.decodeValue(ctx, prefix, key, raw)
		if err != nil {
			return nil, err
		}
		it := store.Item{Namespace: ns.Clone(), Key: key, Value: v, CreatedAt: created.UTC(), UpdatedAt: updated.UTC()}
		if expires != nil {
			it.ExpiresAt = expires.UTC()
		}
		out = append(out, it)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: list items: %w", err)
	}
	return out, nil
}

// deletePrefix is the store core's DeletePrefix hook (items.Hooks): one
// DELETE; the vectors go with their items (ON DELETE CASCADE).
func (s *Store) deletePrefix(ctx context.Context, prefix store.Namespace) (int, error) {
	var a args
	tag, err := s.db.Exec(ctx, `DELETE FROM `+s.t.store+` s WHERE `+nsCond(&a, "s.prefix", prefix), a...)
	if err != nil {
		return 0, fmt.Errorf("postgres: delete prefix: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
