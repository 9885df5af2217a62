package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/internal/items"
)

// PutIf implements store.ConditionalPutter: the item is read and written in
// one write transaction, which SQLite runs alone.
func (s *Store) PutIf(ctx context.Context, ns store.Namespace, key string, value map[string]any, cond store.PutCondition, opts ...store.PutOption) error {
	p, err := items.StartPutIf(ctx, s.b, ns, key, value, opts, s.encodePut)
	if err != nil {
		return err
	}
	puts := []*put{p}
	now := s.b.Now()
	var (
		gen int64
		cw  *codeWrite
	)
	err = s.db.WriteCommitted(ctx, func(tx *sql.Tx) error {
		var (
			updated int64
			expires sql.NullInt64
		)
		err := tx.QueryRowContext(ctx, `SELECT updated_at, expires_at FROM store WHERE prefix = ? AND key = ?`,
			p.k.NS, p.k.Key).Scan(&updated, &expires)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		live := err == nil && (!expires.Valid || expires.Int64 > now.UnixNano())
		if !cond.Holds(live, time.Unix(0, updated)) {
			return store.ErrConflict
		}
		if cw, err = s.beginCodes(ctx, tx); err != nil {
			return err
		}
		if err := s.applyPuts(ctx, tx, cw, puts, now); err != nil {
			return err
		}
		gen, err = s.finishCodes(ctx, tx, cw)
		return err
	}, func() {
		s.committed(gen, puts, now.UnixNano(), cw.full)
	})
	if err != nil {
		return wrap(err)
	}
	return nil
}
