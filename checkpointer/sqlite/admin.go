package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/memvault/memvault/checkpointer/internal/core"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/internal/binding"
)

// prune is the core's Prune hook (core.Hooks), for checkpointer.Pruner.
// PruneKeepLatest keeps, in every namespace of each thread, the latest
// checkpoint, its pending writes, the values its channel versions
// reference and, for a v<4 checkpoint, the pending sends its parent holds,
// and deletes the rest; PruneDelete deletes the threads. Unknown threads
// are ignored. Each call is one transaction of set-based statements whose
// number does not grow with the threads (see keepLatest).
func (s *Saver) prune(ctx context.Context, threadIDs []string, strategy checkpointer.PruneStrategy) error {
	err := s.db.Write(ctx, func(tx *sql.Tx) error {
		if strategy == checkpointer.PruneDelete {
			return deleteThreads(ctx, tx, threadIDs...)
		}
		_, err := keepLatest(ctx, tx, threadIDs, 1)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: prune: %w", err)
	}
	return nil
}

// deleteWrites deletes the pending writes of a checkpoint that is no
// longer stored, except the __pregel_tasks writes a remaining v<4 child
// reads as its pending sends.
func deleteWrites(ctx context.Context, tx *sql.Tx, thread, ns, id string) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM checkpoint_writes
		WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?
		AND NOT (channel = '`+checkpointer.ChannelTasks+`' AND EXISTS (SELECT 1 FROM checkpoints k
			WHERE k.thread_id = ? AND k.checkpoint_ns = ? AND k.parent_checkpoint_id = ?
			AND json_type(k.checkpoint, '$.v') = 'integer' AND json_extract(k.checkpoint, '$.v') < 4))`,
		thread, ns, id, thread, ns, id)
	return err
}

// deleteForRuns is the core's DeleteForRuns hook (core.Hooks), for
// checkpointer.RunDeleter: it deletes, in every
// thread and namespace, the checkpoints whose metadata run_id is one of
// runIDs, with their pending writes and the values no remaining checkpoint
// references, in one transaction.
func (s *Saver) deleteForRuns(ctx context.Context, runIDs []string) error {
	err := s.db.Write(ctx, func(tx *sql.Tx) error {
		type ck struct{ thread, ns, id string }
		var doomed []ck
		threads := map[string]bool{}
		for start := 0; start < len(runIDs); start += chunk {
			part := runIDs[start:min(start+chunk, len(runIDs))]
			args := make([]any, len(part))
			for i, r := range part {
				args[i] = r
			}
			// The expression matches checkpoints_run_id_idx.
			rs, err := tx.QueryContext(ctx, `SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints
				WHERE json_extract(metadata, '$.run_id') IN (`+placeholders(len(part))+`)
				AND json_type(metadata, '$.run_id') = 'text'`, args...)
			if err != nil {
				return err
			}
			for rs.Next() {
				var c ck
				if err := rs.Scan(&c.thread, &c.ns, &c.id); err != nil {
					rs.Close()
					return err
				}
				doomed = append(doomed, c)
				threads[c.thread] = true
			}
			if err := rs.Close(); err != nil {
				return err
			}
			if err := rs.Err(); err != nil {
				return err
			}
		}
		// Checkpoints first, so that deleteWrites sees only the children
		// that stay.
		for _, c := range doomed {
			if _, err := tx.ExecContext(ctx, `DELETE FROM checkpoints
				WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?`, c.thread, c.ns, c.id); err != nil {
				return err
			}
		}
		for _, c := range doomed {
			if err := deleteWrites(ctx, tx, c.thread, c.ns, c.id); err != nil {
				return err
			}
		}
		ids := make([]string, 0, len(threads))
		for thread := range threads {
			ids = append(ids, thread)
		}
		arg, err := json.Marshal(ids)
		if err != nil {
			return err
		}
		_, err = gcBlobs(ctx, tx, string(arg))
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: delete for runs: %w", err)
	}
	return nil
}

// copyThread is the core's CopyThread hook (core.Hooks): every checkpoint (with its
// id), namespace, value and pending write of src is copied to dst, in one
// transaction, overwriting rows of dst with the same keys. Values encrypted
// by a serde.BoundSerializer (a type tag with a cipher suffix) are bound to
// their thread, so they are decrypted under src's associated data and
// encrypted again under dst's; other values are copied byte for byte.
// Copying an unknown thread does nothing.
func (s *Saver) copyThread(ctx context.Context, srcThreadID, dstThreadID string) error {
	bound := s.codec.Bound()
	err := s.db.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO checkpoints
			(thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
			SELECT ?, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata
			FROM checkpoints WHERE thread_id = ?
			ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
				parent_checkpoint_id = excluded.parent_checkpoint_id, type = excluded.type,
				checkpoint = excluded.checkpoint, metadata = excluded.metadata`, dstThreadID, srcThreadID); err != nil {
			return err
		}
		if !bound {
			if _, err := tx.ExecContext(ctx, `INSERT INTO checkpoint_blobs
				(thread_id, checkpoint_ns, channel, version, type, blob)
				SELECT ?, checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs WHERE thread_id = ?
				ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO UPDATE SET
					type = excluded.type, blob = excluded.blob`, dstThreadID, srcThreadID); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO checkpoint_writes
				(thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path)
				SELECT ?, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path
				FROM checkpoint_writes WHERE thread_id = ?
				ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET
					channel = excluded.channel, type = excluded.type, blob = excluded.blob,
					task_path = excluded.task_path`, dstThreadID, srcThreadID)
			return err
		}
		return s.copyBound(ctx, tx, srcThreadID, dstThreadID)
	})
	if err != nil {
		return fmt.Errorf("sqlite: copy thread: %w", err)
	}
	return nil
}

func (s *Saver) copyBound(ctx context.Context, tx *sql.Tx, src, dst string) error {
	rs, err := tx.QueryContext(ctx, `SELECT checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs WHERE thread_id = ?`, src)
	if err != nil {
		return err
	}
	type blob struct {
		ns string
		blobRow
	}
	var blobs []blob
	for rs.Next() {
		var b blob
		if err := rs.Scan(&b.ns, &b.channel, &b.version, &b.typ, &b.data); err != nil {
			rs.Close()
			return err
		}
		blobs = append(blobs, b)
	}
	if err := rs.Close(); err != nil {
		return err
	}
	if err := rs.Err(); err != nil {
		return err
	}
	put, err := tx.PrepareContext(ctx, `INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO UPDATE SET
		type = excluded.type, blob = excluded.blob`)
	if err != nil {
		return err
	}
	defer put.Close()
	var fence binding.Fence // checked under the write lock before the copy commits
	for _, b := range blobs {
		typ, data, err := s.codec.MoveFenced(ctx, binding.Blob{Thread: src, NS: b.ns, Channel: b.channel, Version: b.version}, binding.Blob{Thread: dst, NS: b.ns, Channel: b.channel, Version: b.version}, b.typ, b.data, &fence)
		if err != nil {
			return fmt.Errorf("channel %q: %w", b.channel, err)
		}
		if _, err := put.ExecContext(ctx, dst, b.ns, b.channel, b.version, typ, data); err != nil {
			return err
		}
	}

	rs, err = tx.QueryContext(ctx, `SELECT checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path
		FROM checkpoint_writes WHERE thread_id = ?`, src)
	if err != nil {
		return err
	}
	type write struct {
		ns, id, path string
		core.StoredWrite
	}
	var writes []write
	for rs.Next() {
		var (
			w   write
			typ sql.NullString
		)
		if err := rs.Scan(&w.ns, &w.id, &w.Task, &w.Idx, &w.Channel, &typ, &w.Data, &w.path); err != nil {
			rs.Close()
			return err
		}
		w.Type = typ.String
		writes = append(writes, w)
	}
	if err := rs.Close(); err != nil {
		return err
	}
	if err := rs.Err(); err != nil {
		return err
	}
	putW, err := tx.PrepareContext(ctx, `INSERT INTO checkpoint_writes
		(thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET
		channel = excluded.channel, type = excluded.type, blob = excluded.blob, task_path = excluded.task_path`)
	if err != nil {
		return err
	}
	defer putW.Close()
	for _, w := range writes {
		typ, data, err := s.codec.MoveFenced(ctx, binding.Write{Thread: src, NS: w.ns, Checkpoint: w.id, Task: w.Task, Idx: w.Idx, Channel: w.Channel}, binding.Write{Thread: dst, NS: w.ns, Checkpoint: w.id, Task: w.Task, Idx: w.Idx, Channel: w.Channel}, w.Type, w.Data, &fence)
		if err != nil {
			return fmt.Errorf("write (%s, %d): %w", w.Task, w.Idx, err)
		}
		if data == nil {
			data = []byte{}
		}
		if _, err := putW.ExecContext(ctx, dst, w.ns, w.id, w.Task, w.Idx, w.Channel, typ, data, w.path); err != nil {
			return err
		}
	}
	return s.codec.Check(ctx, &fence)
}
