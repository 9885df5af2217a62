package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/internal/core"
	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/internal/pgfence"
)

// deleteThread is the core's DeleteThread hook (core.Hooks): the thread's
// checkpoints, values and writes, in every namespace, go in one round trip
// and one (implicit) transaction.
func (s *Saver) deleteThread(ctx context.Context, threadID string) error {
	return s.deleteThreads(ctx, s.db, []string{threadID})
}

// DeleteThreadTx is DeleteThread inside the caller's transaction.
func (s *Saver) DeleteThreadTx(ctx context.Context, tx pgx.Tx, threadID string) error {
	if tx == nil {
		return fmt.Errorf("postgres: delete thread: nil transaction")
	}
	return core.DeleteThread(ctx, "postgres", threadID, func(ctx context.Context, id string) error {
		return s.deleteThreads(ctx, tx, []string{id})
	})
}

// deleteThreads deletes checked threads on db: every checkpoint, write
// and value of theirs stored before it began goes. A checkpoint a put
// commits while it runs may stay, whole.
func (s *Saver) deleteThreads(ctx context.Context, db DB, threadIDs []string) error {
	b := &pgx.Batch{}
	// Lock first: wait for the puts continuing these checkpoints, so that
	// the deletes, later statements, see (and delete) what they wrote;
	// later puts find their parent gone (see queries.putCkpt). The values
	// go last, as garbage: a put continuing a checkpoint stored after
	// the lock's snapshot is waited for by the delete and stays (see
	// queries.deleteThreads).
	b.Queue(s.q.lockThreads, threadIDs)
	b.Queue(s.q.deleteThreads, threadIDs)
	b.Queue(s.q.gcBlobs, threadIDs)
	if err := runBatch(ctx, db, b); err != nil {
		return fmt.Errorf("postgres: delete thread: %w", err)
	}
	return nil
}

// prune is the core's Prune hook (core.Hooks), for checkpointer.Pruner.
// PruneKeepLatest keeps the newest
// checkpoint of every namespace of each thread, with its pending writes,
// deletes the other checkpoints and their writes, then removes the blob rows
// no remaining checkpoint references (values of unchanged channels written
// by older checkpoints stay). PruneDelete is DeleteThread for each thread.
// Both run as one round trip and one transaction. Runs may keep writing
// to the thread meanwhile: a put continuing a checkpoint Prune removes
// either commits first, and the values it shares with that checkpoint stay
// (the values are collected by a later statement than the delete, which
// waits for the put's lock on its parent), or fails with
// checkpointer.ErrParentMissing.
//
// The __pregel_tasks writes a kept v<4 checkpoint reads its pending sends
// from stay, though their checkpoint goes.
func (s *Saver) prune(ctx context.Context, threadIDs []string, strategy checkpointer.PruneStrategy) error {
	if strategy == checkpointer.PruneDelete {
		if err := s.deleteThreads(ctx, s.db, threadIDs); err != nil {
			return fmt.Errorf("postgres: prune: %w", err)
		}
		return nil
	}
	b := &pgx.Batch{}
	b.Queue(s.q.pruneCkpts, threadIDs)
	b.Queue(s.q.gcBlobs, threadIDs)
	if err := runBatch(ctx, s.db, b); err != nil {
		return fmt.Errorf("postgres: prune: %w", err)
	}
	return nil
}

// deleteForRuns is the core's DeleteForRuns hook (core.Hooks), for
// checkpointer.RunDeleter: the checkpoints whose
// metadata.run_id is one of runIDs go, with their writes and the blob rows
// no remaining checkpoint of their threads references, in one statement
// after the one locking them (one round trip, one transaction). A
// checkpoint of the runs a put stores while it runs, and another put is
// continuing, stays (see queries.runDelete).
func (s *Saver) deleteForRuns(ctx context.Context, runIDs []string) error {
	// Lock first, as deleteThreads does.
	b := &pgx.Batch{}
	b.Queue(s.q.lockRuns, runIDs)
	b.Queue(s.q.runDelete, runIDs)
	if err := runBatch(ctx, s.db, b); err != nil {
		return fmt.Errorf("postgres: delete for runs: %w", err)
	}
	return nil
}

// copyPage is how many rows a re-encrypting CopyThread moves per statement.
const copyPage = 500

// copyThread is the core's CopyThread hook (core.Hooks), for
// checkpointer.Copier: every checkpoint, value and
// write of src, in every namespace, is copied to dst (rows dst already has
// under the same keys are overwritten) in one transaction. An unknown src
// copies nothing.
//
// With a plain serializer the copy is three INSERT ... SELECT statements in
// one round trip. With an encrypting one (serde.BoundSerializer) values are
// bound to their thread, so each value and write is decrypted under src and
// re-encrypted under dst; rows stored without a cipher suffix are copied as
// they are.
func (s *Saver) copyThread(ctx context.Context, srcThreadID, dstThreadID string) error {
	if !s.codec.Bound() {
		b := &pgx.Batch{}
		b.Queue(s.q.copyCkpts, srcThreadID, dstThreadID)
		b.Queue(s.q.copyBlobs, srcThreadID, dstThreadID)
		b.Queue(s.q.copyWrites, srcThreadID, dstThreadID)
		if err := runBatch(ctx, s.db, b); err != nil {
			return fmt.Errorf("postgres: copy thread: %w", err)
		}
		return nil
	}
	err := pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		// Same order as the plain copy (see queries.go).
		if _, err := tx.Exec(ctx, s.q.copyCkpts, srcThreadID, dstThreadID); err != nil {
			return err
		}
		var fence binding.Fence
		if err := s.reencryptBlobs(ctx, tx, srcThreadID, dstThreadID, &fence); err != nil {
			return err
		}
		if err := s.reencryptWrites(ctx, tx, srcThreadID, dstThreadID, &fence); err != nil {
			return err
		}
		return pgfence.Exec(ctx, s.codec, tx, &fence)
	})
	if err != nil {
		return fmt.Errorf("postgres: copy thread: %w", err)
	}
	return nil
}

func (s *Saver) reencryptBlobs(ctx context.Context, tx pgx.Tx, src, dst string, f *binding.Fence) error {
	var lastNS, lastCh, lastVer string
	first := true
	for {
		var ns, chans, vers, types []string
		var blobs [][]byte
		rows, err := tx.Query(ctx, s.q.srcBlobs, src, lastNS, lastCh, lastVer, copyPage, first)
		if err != nil {
			return err
		}
		for rows.Next() {
			var n, ch, ver, typ string
			var blob []byte
			if err := rows.Scan(&n, &ch, &ver, &typ, &blob); err != nil {
				rows.Close()
				return err
			}
			t, d, err := s.codec.MoveFenced(ctx, binding.Blob{Thread: src, NS: n, Channel: ch, Version: ver}, binding.Blob{Thread: dst, NS: n, Channel: ch, Version: ver}, typ, blob, f)
			if err != nil {
				rows.Close()
				return fmt.Errorf("channel %q version %q: %w", ch, ver, err)
			}
			ns, chans, vers, types, blobs = append(ns, n), append(chans, ch), append(vers, ver), append(types, t), append(blobs, d)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(ns) == 0 {
			return nil
		}
		if _, err := tx.Exec(ctx, s.q.insBlobsCopy, dst, ns, chans, vers, types, blobs); err != nil {
			return err
		}
		if len(ns) < copyPage {
			return nil
		}
		i := len(ns) - 1
		lastNS, lastCh, lastVer, first = ns[i], chans[i], vers[i], false
	}
}

func (s *Saver) reencryptWrites(ctx context.Context, tx pgx.Tx, src, dst string, f *binding.Fence) error {
	var lastNS, lastCP, lastTask string
	var lastIdx int32
	first := true
	for {
		var ns, cps, tasks, paths, chans, types []string
		var idxs []int32
		var blobs [][]byte
		rows, err := tx.Query(ctx, s.q.srcWrites, src, lastNS, lastCP, lastTask, lastIdx, copyPage, first)
		if err != nil {
			return err
		}
		for rows.Next() {
			var n, cp, task, path, ch, typ string
			var idx int32
			var blob []byte
			if err := rows.Scan(&n, &cp, &task, &idx, &path, &ch, &typ, &blob); err != nil {
				rows.Close()
				return err
			}
			t, d, err := s.codec.MoveFenced(ctx, binding.Write{Thread: src, NS: n, Checkpoint: cp, Task: task, Idx: int(idx), Channel: ch}, binding.Write{Thread: dst, NS: n, Checkpoint: cp, Task: task, Idx: int(idx), Channel: ch}, typ, blob, f)
			if err != nil {
				rows.Close()
				return fmt.Errorf("write %s/%d of checkpoint %q: %w", task, idx, cp, err)
			}
			ns, cps, tasks, paths = append(ns, n), append(cps, cp), append(tasks, task), append(paths, path)
			idxs, chans, types, blobs = append(idxs, idx), append(chans, ch), append(types, t), append(blobs, d)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(ns) == 0 {
			return nil
		}
		if _, err := tx.Exec(ctx, s.q.insWritesCopy, dst, ns, cps, tasks, paths, idxs, chans, types, blobs); err != nil {
			return err
		}
		if len(ns) < copyPage {
			return nil
		}
		i := len(ns) - 1
		lastNS, lastCP, lastTask, lastIdx, first = ns[i], cps[i], tasks[i], idxs[i], false
	}
}
