package postgres

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/internal/envelope"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/internal/rotate"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
)

var _ store.Reencrypter = (*Store)(nil)

// Reencrypt implements store.Reencrypter: every item value not sealed under
// the serializer's primary key (or still plain JSONB, when the serializer
// allows reading plaintext) becomes an envelope sealed under it, bound to
// the item's namespace and key. Rows are read in key order a batch at a
// time and written back with compare-and-swap updates in one transaction
// per batch, so concurrent writes win and an interrupted run can be started
// again. Vectors, timestamps and TTLs are untouched.
func (s *Store) Reencrypt(ctx context.Context, opt checkpointer.ReencryptOptions) (checkpointer.ReencryptStats, error) {
	if err := s.b.Check(ctx); err != nil {
		return checkpointer.ReencryptStats{}, err
	}
	sealer, ok := s.opts.Serde.(rotate.Sealer)
	if !ok {
		return checkpointer.ReencryptStats{}, fmt.Errorf("postgres: %w", rotate.ErrNotEncrypted)
	}
	items := rotate.Table{
		Name: "store",
		Count: func(ctx context.Context) (n int64, err error) {
			err = s.db.QueryRow(ctx, `SELECT count(*) FROM `+s.t.store).Scan(&n)
			return n, err
		},
		Fetch: func(ctx context.Context, after []any, limit int) ([]rotate.Row, error) {
			if after == nil {
				after = []any{"", ""}
			}
			rows, err := s.db.Query(ctx, `SELECT prefix, key, value::text FROM `+s.t.store+`
WHERE (prefix, key) > ($1, $2) ORDER BY prefix, key LIMIT $3`, after[0], after[1], limit)
			if err != nil {
				return nil, err
			}
			return pgx.CollectRows(rows, func(r pgx.CollectableRow) (rotate.Row, error) {
				var prefix, key, raw string
				if err := r.Scan(&prefix, &key, &raw); err != nil {
					return rotate.Row{}, err
				}
				row := binding.Row([]any{prefix, key, raw}, binding.Item{Namespace: prefix, Key: key}, serde.TypeJSON, []byte(raw))
				tag, data, ok, err := envelope.Parse([]byte(raw))
				if err != nil {
					return row, fmt.Errorf("%s/%s: %w", prefix, key, err)
				}
				if ok {
					row.Typ, row.Data = tag, data
				}
				return row, nil
			})
		},
		Update: func(ctx context.Context, changes []rotate.Change) error {
			b := &pgx.Batch{}
			for _, c := range changes {
				value := envelope.Encode(c.NewTyp, c.NewData)
				// value::text of JSONB is canonical, so comparing it with
				// what was read is an exact compare-and-swap.
				b.Queue(`UPDATE `+s.t.store+` SET value = $1::jsonb WHERE prefix = $2 AND key = $3 AND value::text = $4`,
					string(value), c.Key[0], c.Key[1], c.Key[2])
			}
			return pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
				return tx.SendBatch(ctx, b).Close()
			})
		},
	}
	st, err := rotate.Run(ctx, sealer, opt, items)
	if err != nil {
		return st, fmt.Errorf("postgres: %w", err)
	}
	return st, nil
}
