package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/memvault/memvault/checkpointer/internal/core"
)

// deleteCheckpoint is the core's DeleteCheckpoint hook (core.Hooks): in one write
// transaction, the checkpoint's writes and row, then the blob rows of its
// channel versions that no other checkpoint of its namespace uses.
func (s *Saver) deleteCheckpoint(ctx context.Context, thread, ns, id string) error {
	err := s.db.Write(ctx, func(tx *sql.Tx) error {
		var doc []byte
		err := tx.QueryRowContext(ctx, `SELECT checkpoint FROM checkpoints
			WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?`, thread, ns, id).Scan(&doc)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		dec, err := core.DecodeCheckpointJSON(doc)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM checkpoints
			WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?`, thread, ns, id); err != nil {
			return err
		}
		if err := deleteWrites(ctx, tx, thread, ns, id); err != nil {
			return err
		}
		// A blob row is shared by every checkpoint at that version of the
		// channel: it goes only when none of them is left.
		live := map[[2]string]bool{}
		rs, err := tx.QueryContext(ctx, `SELECT checkpoint FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ?`, thread, ns)
		if err != nil {
			return err
		}
		for rs.Next() {
			var other []byte
			if err := rs.Scan(&other); err != nil {
				rs.Close()
				return err
			}
			d, err := core.DecodeCheckpointJSON(other)
			if err != nil {
				rs.Close()
				return err
			}
			for ch, ver := range d.Checkpoint.ChannelVersions {
				live[[2]string{ch, ver}] = true
			}
		}
		if err := rs.Close(); err != nil {
			return err
		}
		for ch, ver := range dec.Checkpoint.ChannelVersions {
			if live[[2]string{ch, ver}] {
				continue
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM checkpoint_blobs
				WHERE thread_id = ? AND checkpoint_ns = ? AND channel = ? AND version = ?`, thread, ns, ch, ver); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: delete checkpoint: %w", err)
	}
	return nil
}
