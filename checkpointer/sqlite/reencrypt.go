package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/internal/rotate"
)

var _ checkpointer.Reencrypter = (*Saver)(nil)

// Reencrypt implements checkpointer.Reencrypter: every channel value and
// pending write not sealed under the serializer's primary key is sealed
// again, bound to the same row, in batches of one write transaction each.
// A row changed by someone else between read and write is left as it is
// (it was just written, so under the primary key). Running it again after
// an interruption continues where it stopped.
func (s *Saver) Reencrypt(ctx context.Context, opt checkpointer.ReencryptOptions) (checkpointer.ReencryptStats, error) {
	sealer, ok := s.serde.(rotate.Sealer)
	if !ok {
		return checkpointer.ReencryptStats{}, fmt.Errorf("sqlite: %w", rotate.ErrNotEncrypted)
	}
	r := s.db.Reader()
	blobs := rotate.Table{
		Name: "checkpoint_blobs",
		Count: func(ctx context.Context) (n int64, err error) {
			err = r.QueryRowContext(ctx, `SELECT count(*) FROM checkpoint_blobs WHERE type <> 'empty'`).Scan(&n)
			return n, err
		},
		Fetch: func(ctx context.Context, after []any, limit int) ([]rotate.Row, error) {
			if after == nil {
				after = []any{"", "", "", ""}
			}
			rows, err := r.QueryContext(ctx, `SELECT thread_id, checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs
WHERE type <> 'empty' AND (thread_id, checkpoint_ns, channel, version) > (?, ?, ?, ?)
ORDER BY thread_id, checkpoint_ns, channel, version LIMIT ?`, append(after, limit)...)
			if err != nil {
				return nil, err
			}
			return scanValueRows(rows, func(sc func(...any) error) (rotate.Row, error) {
				var t, ns, ch, v, typ string
				var data []byte
				if err := sc(&t, &ns, &ch, &v, &typ, &data); err != nil {
					return rotate.Row{}, err
				}
				return binding.Row([]any{t, ns, ch, v}, binding.Blob{Thread: t, NS: ns, Channel: ch, Version: v}, typ, data), nil
			})
		},
		Update: func(ctx context.Context, changes []rotate.Change) error {
			return s.db.Write(ctx, func(tx *sql.Tx) error {
				for _, c := range changes {
					if _, err := tx.ExecContext(ctx, `UPDATE checkpoint_blobs SET type = ?, blob = ?
WHERE thread_id = ? AND checkpoint_ns = ? AND channel = ? AND version = ? AND type = ? AND blob = ?`,
						append(append([]any{c.NewTyp, c.NewData}, c.Key...), c.Typ, c.Data)...); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
	writes := rotate.Table{
		Name: "checkpoint_writes",
		Count: func(ctx context.Context) (n int64, err error) {
			err = r.QueryRowContext(ctx, `SELECT count(*) FROM checkpoint_writes`).Scan(&n)
			return n, err
		},
		Fetch: func(ctx context.Context, after []any, limit int) ([]rotate.Row, error) {
			if after == nil {
				after = []any{"", "", "", "", int64(-1 << 62)}
			}
			rows, err := r.QueryContext(ctx, `SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, coalesce(type, ''), blob FROM checkpoint_writes
WHERE (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) > (?, ?, ?, ?, ?)
ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx LIMIT ?`, append(after, limit)...)
			if err != nil {
				return nil, err
			}
			return scanValueRows(rows, func(sc func(...any) error) (rotate.Row, error) {
				var t, ns, id, task, ch, typ string
				var idx int64
				var data []byte
				if err := sc(&t, &ns, &id, &task, &idx, &ch, &typ, &data); err != nil {
					return rotate.Row{}, err
				}
				return binding.Row([]any{t, ns, id, task, idx}, binding.Write{Thread: t, NS: ns, Checkpoint: id, Task: task, Idx: int(idx), Channel: ch}, typ, data), nil
			})
		},
		Update: func(ctx context.Context, changes []rotate.Change) error {
			return s.db.Write(ctx, func(tx *sql.Tx) error {
				for _, c := range changes {
					if _, err := tx.ExecContext(ctx, `UPDATE checkpoint_writes SET type = ?, blob = ?
WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? AND task_id = ? AND idx = ? AND coalesce(type, '') = ? AND blob = ?`,
						append(append([]any{c.NewTyp, c.NewData}, c.Key...), c.Typ, c.Data)...); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
	st, err := rotate.Run(ctx, sealer, opt, blobs, writes)
	if err != nil {
		return st, fmt.Errorf("sqlite: %w", err)
	}
	return st, nil
}

// scanValueRows reads every row with scan and closes rows.
func scanValueRows(rows *sql.Rows, scan func(sc func(...any) error) (rotate.Row, error)) ([]rotate.Row, error) {
	defer rows.Close()
	var out []rotate.Row
	for rows.Next() {
		r, err := scan(rows.Scan)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
