package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/memvault/memvault/internal/envelope"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/internal/rotate"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
)

var _ store.Reencrypter = (*Store)(nil)

// Reencrypt implements store.Reencrypter: every item value not sealed
// under the serializer's primary key (or still plaintext, when the
// serializer allows reading plaintext) is sealed again, bound to its
// namespace and key, a batch per write transaction. Vectors are untouched:
// they never change with the key. Safe to run again after an interruption.
func (s *Store) Reencrypt(ctx context.Context, opt checkpointer.ReencryptOptions) (checkpointer.ReencryptStats, error) {
	if err := s.b.Check(ctx); err != nil {
		return checkpointer.ReencryptStats{}, err
	}
	sealer, ok := s.serde.(rotate.Sealer)
	if !ok {
		return checkpointer.ReencryptStats{}, fmt.Errorf("sqlite: %w", rotate.ErrNotEncrypted)
	}
	r := s.db.Reader()
	items := rotate.Table{
		Name: "store",
		Count: func(ctx context.Context) (n int64, err error) {
			err = r.QueryRowContext(ctx, `SELECT count(*) FROM store`).Scan(&n)
			return n, err
		},
		Fetch: func(ctx context.Context, after []any, limit int) ([]rotate.Row, error) {
			if after == nil {
				after = []any{"", ""}
			}
			rows, err := r.QueryContext(ctx, `SELECT prefix, key, value FROM store
WHERE (prefix, key) > (?, ?) ORDER BY prefix, key LIMIT ?`, after[0], after[1], limit)
			if err != nil {
				return nil, err
			}
			defer rows.Close()
			var out []rotate.Row
			for rows.Next() {
				var prefix, key string
				var raw []byte
				if err := rows.Scan(&prefix, &key, &raw); err != nil {
					return nil, err
				}
				row := binding.Row([]any{prefix, key}, binding.Item{Namespace: prefix, Key: key}, serde.TypeJSON, raw)
				tag, data, ok, err := envelope.Parse(raw)
				if err != nil {
					return nil, fmt.Errorf("%w: %s/%s: %v", errCorrupt, prefix, key, err)
				}
				if ok {
					row.Typ, row.Data = tag, data
				}
				// The compare-and-swap below needs the column as stored.
				row.Key = append(row.Key, raw)
				out = append(out, row)
			}
			return out, rows.Err()
		},
		Update: func(ctx context.Context, changes []rotate.Change) error {
			return s.db.Write(ctx, func(tx *sql.Tx) error {
				for _, c := range changes {
					value := envelope.Encode(c.NewTyp, c.NewData)
					if _, err := tx.ExecContext(ctx, `UPDATE store SET value = ? WHERE prefix = ? AND key = ? AND CAST(value AS BLOB) = ?`,
						value, c.Key[0], c.Key[1], c.Key[2]); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
	st, err := rotate.Run(ctx, sealer, opt, items)
	if err != nil {
		return st, fmt.Errorf("sqlite: %w", err)
	}
	return st, nil
}
