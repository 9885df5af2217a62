package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/internal/pgfence"
	"github.com/memvault/memvault/internal/pgretry"
	"github.com/memvault/memvault/store"
)

// condPut writes the row of a conditional put (engine.CondTx) at once, in
// a transaction of its own (a savepoint of the caller's): the item's row is
// written by a statement whose WHERE clause is the condition (an INSERT
// that replaces only an expired row when the item must be absent, an
// UPDATE of the row at the expected updated_at otherwise); no row written
// is store.ErrConflict and a rollback; then its vectors follow.
func (t *pgTx) condPut(ctx context.Context, w store.RowWrite, cond store.PutCondition) error {
	t.d.topo.Distributed(ctx, t.d.db) // for ShardFilter
	r, vecs, now, err := t.d.putRows([]store.RowWrite{w}, nil)
	if err != nil {
		return err
	}
	var item string
	args := []any{r.up.prefix[0], r.up.key[0], r.up.value[0], now, r.exp[0], r.ttlM[0]}
	if cond.UpdatedAt.IsZero() {
		item = `INSERT INTO ` + t.d.t.store + ` AS s (prefix, key, value, created_at, updated_at, expires_at, ttl_minutes)
VALUES ($1, $2, $3::jsonb, $4, $4, $5, $6)
ON CONFLICT (prefix, key) DO UPDATE SET value = EXCLUDED.value, created_at = EXCLUDED.created_at,
    updated_at = GREATEST(EXCLUDED.updated_at, ` + nextTick("s.updated_at") + `),
    expires_at = EXCLUDED.expires_at, ttl_minutes = EXCLUDED.ttl_minutes
WHERE s.expires_at IS NOT NULL AND s.expires_at <= $4`
	} else {
		item = `UPDATE ` + t.d.t.store + ` s SET value = $3::jsonb,
    updated_at = GREATEST($4, ` + nextTick("s.updated_at") + `), expires_at = $5, ttl_minutes = $6
WHERE s.prefix = $1 AND s.key = $2 AND s.updated_at = $7 AND (s.expires_at IS NULL OR s.expires_at > $4)`
		args = append(args, cond.UpdatedAt)
	}
	run := func(q Querier, binary bool) error {
		begin, ok := q.(DB)
		if !ok {
			return fmt.Errorf("postgres: put if: %T cannot begin a transaction", q)
		}
		return pgretry.Owned(ctx, t.owned, func() error {
			tx, err := begin.Begin(ctx)
			if err != nil {
				return err
			}
			defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit a no-op
			if err := pgfence.Exec(ctx, tx, t.fence); err != nil {
				return err
			}
			if len(t.records) > 0 {
				// Rolled back with the put when its condition fails.
				b := &pgx.Batch{}
				queueRecords(b, t.records)
				if err := tx.SendBatch(ctx, b).Close(); err != nil {
					return err
				}
			}
			tag, err := tx.Exec(ctx, item, args...)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				return store.ErrConflict
			}
			b := &pgx.Batch{}
			t.d.queueVectors(b, r, vecs, binary, now)
			if b.Len() > 0 {
				if err := tx.SendBatch(ctx, b).Close(); err != nil {
					return err
				}
			}
			return tx.Commit(ctx)
		})
	}
	if len(vecs) > 0 {
		err = vectorConn(ctx, t.q, run)
	} else {
		err = run(t.q, false)
	}
	if err != nil && !errors.Is(err, store.ErrConflict) {
		return fmt.Errorf("postgres: put if: %w", err)
	}
	return err
}
