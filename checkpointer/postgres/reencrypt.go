package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/internal/rotate"
)

var _ checkpointer.Reencrypter = (*Saver)(nil)

// Reencrypt implements checkpointer.Reencrypter: every channel value and
// pending write not sealed under the serializer's primary key is sealed
// again, bound to the same row. Rows are read in primary-key order, a batch
// at a time, and each batch is written back in one transaction with
// compare-and-swap updates, so rows written meanwhile (already under the
// primary key) are left alone and an interrupted run can simply be started
// again. LangGraph "aes" rows from Python are rewritten in the format this
// saver writes.
func (s *Saver) Reencrypt(ctx context.Context, opt checkpointer.ReencryptOptions) (checkpointer.ReencryptStats, error) {
	sealer, ok := s.serde.(rotate.Sealer)
	if !ok {
		return checkpointer.ReencryptStats{}, fmt.Errorf("postgres: %w", rotate.ErrNotEncrypted)
	}
	blobs := rotate.Table{
		Name: "checkpoint_blobs",
		Count: func(ctx context.Context) (n int64, err error) {
			err = s.db.QueryRow(ctx, `SELECT count(*) FROM `+s.q.blobs+` WHERE blob IS NOT NULL AND type <> 'empty'`).Scan(&n)
			return n, err
		},
		Fetch: func(ctx context.Context, after []any, limit int) ([]rotate.Row, error) {
			if after == nil {
				after = []any{"", "", "", ""}
			}
			rows, err := s.db.Query(ctx, `SELECT thread_id, checkpoint_ns, channel, version, type, blob FROM `+s.q.blobs+`
WHERE blob IS NOT NULL AND type <> 'empty' AND (thread_id, checkpoint_ns, channel, version) > ($1, $2, $3, $4)
ORDER BY thread_id, checkpoint_ns, channel, version LIMIT $5`, append(after, limit)...)
			if err != nil {
				return nil, err
			}
			return pgx.CollectRows(rows, func(r pgx.CollectableRow) (rotate.Row, error) {
				var t, ns, ch, v, typ string
				var data []byte
				if err := r.Scan(&t, &ns, &ch, &v, &typ, &data); err != nil {
					return rotate.Row{}, err
				}
				return binding.Row([]any{t, ns, ch, v}, binding.Blob{Thread: t, NS: ns, Channel: ch, Version: v}, typ, data), nil
			})
		},
		Update: func(ctx context.Context, changes []rotate.Change) error {
			b := &pgx.Batch{}
			for _, c := range changes {
				b.Queue(`UPDATE `+s.q.blobs+` SET type = $1, blob = $2
WHERE thread_id = $3 AND checkpoint_ns = $4 AND channel = $5 AND version = $6 AND type = $7 AND blob = $8`,
					append(append([]any{c.NewTyp, c.NewData}, c.Key...), c.Typ, c.Data)...)
			}
			return s.inTxn(ctx, b)
		},
	}
	writes := rotate.Table{
		Name: "checkpoint_writes",
		Count: func(ctx context.Context) (n int64, err error) {
			err = s.db.QueryRow(ctx, `SELECT count(*) FROM `+s.q.writes).Scan(&n)
			return n, err
		},
		Fetch: func(ctx context.Context, after []any, limit int) ([]rotate.Row, error) {
			if after == nil {
				after = []any{"", "", "", "", int32(-1 << 31)}
			}
			rows, err := s.db.Query(ctx, `SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, coalesce(type, ''), blob FROM `+s.q.writes+`
WHERE (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) > ($1, $2, $3, $4, $5)
ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx LIMIT $6`, append(after, limit)...)
			if err != nil {
				return nil, err
			}
			return pgx.CollectRows(rows, func(r pgx.CollectableRow) (rotate.Row, error) {
				var t, ns, id, task, ch, typ string
				var idx int32
				var data []byte
				if err := r.Scan(&t, &ns, &id, &task, &idx, &ch, &typ, &data); err != nil {
					return rotate.Row{}, err
				}
				return binding.Row([]any{t, ns, id, task, idx}, binding.Write{Thread: t, NS: ns, Checkpoint: id, Task: task, Idx: int(idx), Channel: ch}, typ, data), nil
			})
		},
		Update: func(ctx context.Context, changes []rotate.Change) error {
			b := &pgx.Batch{}
			for _, c := range changes {
				b.Queue(`UPDATE `+s.q.writes+` SET type = $1, blob = $2
WHERE thread_id = $3 AND checkpoint_ns = $4 AND checkpoint_id = $5 AND task_id = $6 AND idx = $7 AND coalesce(type, '') = $8 AND blob = $9`,
					append(append([]any{c.NewTyp, c.NewData}, c.Key...), c.Typ, c.Data)...)
			}
			return s.inTxn(ctx, b)
		},
	}
	st, err := rotate.Run(ctx, sealer, opt, blobs, writes)
	if err != nil {
		return st, fmt.Errorf("postgres: %w", err)
	}
	return st, nil
}

// inTxn sends b in one transaction (the caller's, when the saver runs in
// one).
func (s *Saver) inTxn(ctx context.Context, b *pgx.Batch) error {
	return pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		return tx.SendBatch(ctx, b).Close()
	})
}
