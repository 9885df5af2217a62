package engine

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/internal/core"
	"github.com/memvault/memvault/internal/binding"
)

// copyThread copies every checkpoint (with its id), namespace, value and
// write of src to dst, in one transaction, replacing dst's rows with the
// same keys. Values sealed where they live are opened and sealed again for
// dst (a ciphertext moved as it is would not open there), and the copy
// runs the write fence of the keys that sealed them. Copying an unknown
// thread does nothing.
func (s *Saver) copyThread(ctx context.Context, src, dst string) error {
	// Recorded before the copy's rows are (and outside the data's
	// transaction, whose fence may hold key rows an erasure waits for):
	// with subjects named in metadata, an erasure of the subject src is
	// bound to, now or later, must reach dst too. A failed copy leaves the
	// record, which can only make an erasure reach more — dst's among
	// them, which may be another user's thread: so a copy of a thread
	// holding nothing (which copies nothing) records nothing. A source
	// emptied between this look and the copy leaves a record too.
	if s.codec.FollowsCopies() {
		empty := false
		if err := s.update(ctx, func(tx checkpointer.DriverTx) error {
			rows, err := tx.Rows(ctx, src)
			if err == nil {
				empty = rows.Empty()
			}
			return err
		}); err != nil {
			return err
		}
		if empty {
			return nil
		}
	}
	if err := s.codec.FollowThread(ctx, dst, src); err != nil {
		return s.wrap(fmt.Errorf("copy thread: %w", err))
	}
	return s.update(ctx, func(tx checkpointer.DriverTx) error {
		rows, err := tx.Rows(ctx, src)
		if err != nil {
			return err
		}
		if rows.Empty() {
			return nil
		}
		var fence binding.Fence
		if s.codec.Bound() {
			for i := range rows.Values {
				v := &rows.Values[i]
				from := binding.Blob{Thread: src, NS: v.NS, Channel: v.Channel, Version: v.Version}
				to := from
				to.Thread = dst
				if v.Type, v.Data, err = s.codec.MoveFenced(ctx, from, to, v.Type, v.Data, &fence); err != nil {
					return fmt.Errorf("copy thread: channel %q: %w", v.Channel, err)
				}
			}
			for i := range rows.Writes {
				w := &rows.Writes[i]
				from := binding.Write{Thread: src, NS: w.NS, Checkpoint: w.Checkpoint, Task: w.Task, Idx: w.Idx, Channel: w.Channel}
				to := from
				to.Thread = dst
				if w.Type, w.Data, err = s.codec.MoveFenced(ctx, from, to, w.Type, w.Data, &fence); err != nil {
					return fmt.Errorf("copy thread: write (%s, %d): %w", w.Task, w.Idx, err)
				}
			}
		}
		if err := s.codec.FenceThread(ctx, dst, &fence); err != nil {
			return fmt.Errorf("copy thread: %w", err)
		}
		if err := tx.Fence(ctx, core.WriteFence(s.codec, &fence)); err != nil {
			return fmt.Errorf("copy thread: %w", err)
		}
		return tx.Overwrite(ctx, dst, rows)
	})
}

// ImportThread implements checkpointer.ThreadImporter: every item is put
// with the rules of Put and PutWrites — validated, sealed where it lives,
// a parent that a checkpoint inherits from required — in one transaction,
// so a failed import stores nothing.
func (s *Saver) ImportThread(ctx context.Context, items []checkpointer.ImportCheckpoint) error {
	if err := ctx.Err(); err != nil {
		return s.wrap(err)
	}
	// Seal everything before the transaction begins: no driver lock is
	// held while values are encrypted.
	type prepared struct {
		put    *checkpointer.PutRows
		writes []*checkpointer.WriteRows
	}
	all := make([]prepared, 0, len(items))
	for _, it := range items {
		var p prepared
		if it.Checkpoint != nil {
			parent := checkpointer.Config{ThreadID: it.ThreadID, CheckpointNS: it.CheckpointNS, CheckpointID: it.ParentID}
			r, err := s.putRows(ctx, parent, it.Checkpoint, it.Metadata, it.NewVersions)
			if err != nil {
				return s.wrap(err)
			}
			p.put = r
		}
		cfg := checkpointer.Config{ThreadID: it.ThreadID, CheckpointNS: it.CheckpointNS, CheckpointID: it.ID}
		for _, w := range it.Writes {
			r, err := s.writeRows(ctx, cfg, w.Writes, w.TaskID, "")
			if err != nil {
				return s.wrap(fmt.Errorf("writes of %q: %w", w.TaskID, err))
			}
			if r != nil {
				p.writes = append(p.writes, r)
			}
		}
		all = append(all, p)
	}
	return s.update(ctx, func(tx checkpointer.DriverTx) error {
		for _, p := range all {
			if p.put != nil {
				if err := tx.Put(ctx, p.put); err != nil {
					return err
				}
			}
			for _, w := range p.writes {
				if err := tx.PutWrites(ctx, w); err != nil {
					return fmt.Errorf("writes of %q: %w", w.Task, err)
				}
			}
		}
		return nil
	})
}
