package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/memvault/memvault/store"
)

// listItems is the store core's ListItems hook (items.Hooks): one indexed
// range read of the (prefix, key) primary key.
func (s *Store) listItems(ctx context.Context, prefix, after string, limit int, now time.Time) ([]store.Item, error) {
	var out []store.Item
	err := s.db.Read(ctx, func(tx *sql.Tx) error {
		rs, err := tx.QueryContext(ctx, `SELECT `+itemColumns+` FROM store
			WHERE prefix = ? AND key > ? AND (expires_at IS NULL OR expires_at > ?)
			ORDER BY key LIMIT ?`, prefix, after, now.UnixNano(), limit)
		if err != nil {
			return err
		}
		defer rs.Close()
		for rs.Next() {
			r, err := scanItem(rs)
			if err != nil {
				return err
			}
			it, err := s.item(ctx, r, nil, now, false, nil)
			if err != nil {
				return err
			}
			out = append(out, *it)
		}
		return rs.Err()
	})
	if err != nil {
		return nil, wrap(err)
	}
	return out, nil
}

// deletePrefix is the store core's DeletePrefix hook (items.Hooks): the
// keys under prefix are deleted by one Batch, so vectors, the vector cache
// and the generation counter follow as for any delete.
func (s *Store) deletePrefix(ctx context.Context, prefix store.Namespace) (int, error) {
	var ops []store.Op
	err := s.db.Read(ctx, func(tx *sql.Tx) error {
		cond, args := prefixCond("prefix", prefix)
		rs, err := tx.QueryContext(ctx, `SELECT prefix, key FROM store WHERE `+cond, args...)
		if err != nil {
			return err
		}
		defer rs.Close()
		for rs.Next() {
			var ns, key string
			if err := rs.Scan(&ns, &key); err != nil {
				return err
			}
			ops = append(ops, store.PutOp{Namespace: store.ParseNamespace(ns), Key: key})
		}
		return rs.Err()
	})
	if err != nil {
		return 0, wrap(err)
	}
	if len(ops) == 0 {
		return 0, nil
	}
	if _, err := s.batch(ctx, ops, prefix); err != nil {
		return 0, err
	}
	return len(ops), nil
}
