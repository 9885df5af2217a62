package durable

import (
	"context"
	"errors"
	"iter"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/reencrypt"
)

// Every interface of checkpointer, as the package doc promises.
var _ interface {
	checkpointer.Saver
	checkpointer.Reencrypter
	checkpointer.Pruner
	checkpointer.Copier
	checkpointer.RunDeleter
	checkpointer.CheckpointDeleter
	checkpointer.ThreadLister
	checkpointer.ThreadImporter
	checkpointer.Sweeper
} = (*Saver)(nil)

// waitThreads waits for each named thread's queue and returns the first
// error one of them holds. Empty ids are left to the inner saver to
// refuse.
func (s *Saver) waitThreads(ctx context.Context, ids ...string) error {
	for _, id := range ids {
		if id == "" {
			continue
		}
		if err := s.wait(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// removing waits for the queues of the threads a removal names, after
// forgetting what they last queued (see forget). A queued write that
// failed does not stop a removal, which works on what is stored: its
// error stays for Flush and, unless the removal deletes the whole thread
// (whole), for the thread's next calls. A deleted thread starts afresh
// — an erasure deleting a subject's threads must not be refused forever
// by the put that failed because the subject's keys were destroyed.
func (s *Saver) removing(ctx context.Context, whole bool, ids ...string) error {
	s.mu.Lock()
	s.forget(false, ids...)
	s.mu.Unlock()
	for _, id := range ids {
		if id == "" {
			continue
		}
		err := s.wait(ctx, id)
		var we *writeError
		if !errors.As(err, &we) {
			if err != nil {
				return err
			}
			continue
		}
		if whole {
			s.mu.Lock()
			if th := s.threads[id]; th != nil && th.err == err {
				th.err = nil
				s.detached = append(s.detached, err)
			}
			s.mu.Unlock()
		}
	}
	return nil
}

// GetTuple implements checkpointer.Saver after the thread's queue is
// written.
func (s *Saver) GetTuple(ctx context.Context, cfg checkpointer.Config) (*checkpointer.Tuple, error) {
	if err := s.waitThreads(ctx, cfg.ThreadID); err != nil {
		return nil, err
	}
	return s.inner.GetTuple(ctx, cfg)
}

// List implements checkpointer.Saver after the thread's queue is written
// (every queue, for a list across threads).
func (s *Saver) List(ctx context.Context, cfg *checkpointer.Config, opt checkpointer.ListOptions) iter.Seq2[*checkpointer.Tuple, error] {
	return func(yield func(*checkpointer.Tuple, error) bool) {
		var err error
		if cfg != nil && cfg.ThreadID != "" {
			err = s.wait(ctx, cfg.ThreadID)
		} else {
			err = s.waitAll(ctx, false)
		}
		if err != nil {
			yield(nil, err)
			return
		}
		for tp, err := range s.inner.List(ctx, cfg, opt) {
			if !yield(tp, err) {
				return
			}
		}
	}
}

// DeleteThread implements checkpointer.Saver after the thread's queue is
// written.
func (s *Saver) DeleteThread(ctx context.Context, threadID string) error {
	if err := s.removing(ctx, true, threadID); err != nil {
		return err
	}
	return s.inner.DeleteThread(ctx, threadID)
}

// Prune implements checkpointer.Pruner after the threads' queues are
// written.
func (s *Saver) Prune(ctx context.Context, threadIDs []string, strategy checkpointer.PruneStrategy) error {
	p, ok := s.inner.(checkpointer.Pruner)
	if !ok {
		return ErrUnsupported
	}
	if err := s.removing(ctx, strategy == checkpointer.PruneDelete, threadIDs...); err != nil {
		return err
	}
	return p.Prune(ctx, threadIDs, strategy)
}

// CopyThread implements checkpointer.Copier after both threads' queues
// are written.
func (s *Saver) CopyThread(ctx context.Context, srcThreadID, dstThreadID string) error {
	c, ok := s.inner.(checkpointer.Copier)
	if !ok {
		return ErrUnsupported
	}
	if err := s.waitThreads(ctx, srcThreadID, dstThreadID); err != nil {
		return err
	}
	return c.CopyThread(ctx, srcThreadID, dstThreadID)
}

// DeleteCheckpoint implements checkpointer.CheckpointDeleter after the
// thread's queue is written.
func (s *Saver) DeleteCheckpoint(ctx context.Context, cfg checkpointer.Config) error {
	d, ok := s.inner.(checkpointer.CheckpointDeleter)
	if !ok {
		return ErrUnsupported
	}
	if err := s.removing(ctx, false, cfg.ThreadID); err != nil {
		return err
	}
	return d.DeleteCheckpoint(ctx, cfg)
}

// DeleteForRuns implements checkpointer.RunDeleter after every queue is
// written (a run's checkpoints may be on any thread).
func (s *Saver) DeleteForRuns(ctx context.Context, runIDs []string) error {
	d, ok := s.inner.(checkpointer.RunDeleter)
	if !ok {
		return ErrUnsupported
	}
	if err := s.waitAll(ctx, true); err != nil {
		return err
	}
	return d.DeleteForRuns(ctx, runIDs)
}

// ListThreads implements checkpointer.ThreadLister after every queue is
// written.
func (s *Saver) ListThreads(ctx context.Context) iter.Seq2[checkpointer.ThreadInfo, error] {
	return func(yield func(checkpointer.ThreadInfo, error) bool) {
		l, ok := s.inner.(checkpointer.ThreadLister)
		if !ok {
			yield(checkpointer.ThreadInfo{}, ErrUnsupported)
			return
		}
		if err := s.waitAll(ctx, false); err != nil {
			yield(checkpointer.ThreadInfo{}, err)
			return
		}
		for ti, err := range l.ListThreads(ctx) {
			if !yield(ti, err) {
				return
			}
		}
	}
}

// RowThreadIDs lists every thread holding any row — pending writes only
// included, which ListThreads misses — after every queue is written, as
// the inner saver's RowThreadIDs (engine.Saver) does; an inner saver
// without it yields only ErrUnsupported. An erasure (vault.Forget) finds a
// subject's threads through it: without it here, a thread of an erased
// subject holding only pending writes stayed behind.
func (s *Saver) RowThreadIDs(ctx context.Context) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		rt, ok := s.inner.(interface {
			RowThreadIDs(ctx context.Context) iter.Seq2[string, error]
		})
		if !ok {
			yield("", ErrUnsupported)
			return
		}
		if err := s.waitAll(ctx, false); err != nil {
			yield("", err)
			return
		}
		for id, err := range rt.RowThreadIDs(ctx) {
			if !yield(id, err) {
				return
			}
		}
	}
}

// ImportThread implements checkpointer.ThreadImporter after the queues of
// the threads it writes are written; the import itself is synchronous.
func (s *Saver) ImportThread(ctx context.Context, items []checkpointer.ImportCheckpoint) error {
	im, ok := s.inner.(checkpointer.ThreadImporter)
	if !ok {
		return ErrUnsupported
	}
	seen := map[string]bool{}
	for _, it := range items {
		if seen[it.ThreadID] {
			continue
		}
		seen[it.ThreadID] = true
		if err := s.waitThreads(ctx, it.ThreadID); err != nil {
			return err
		}
	}
	return im.ImportThread(ctx, items)
}

// Sweep implements checkpointer.Sweeper after every queue is written.
func (s *Saver) Sweep(ctx context.Context, policy checkpointer.RetentionPolicy, opt checkpointer.SweepOptions) (checkpointer.SweepReport, error) {
	sw, ok := s.inner.(checkpointer.Sweeper)
	if !ok {
		return checkpointer.SweepReport{}, ErrUnsupported
	}
	if err := s.waitAll(ctx, !opt.DryRun); err != nil {
		return checkpointer.SweepReport{}, err
	}
	return sw.Sweep(ctx, policy, opt)
}

// Reencrypt implements checkpointer.Reencrypter after every queue is
// written.
func (s *Saver) Reencrypt(ctx context.Context, opt reencrypt.Options) (reencrypt.Stats, error) {
	re, ok := s.inner.(checkpointer.Reencrypter)
	if !ok {
		return reencrypt.Stats{}, ErrUnsupported
	}
	if err := s.waitAll(ctx, false); err != nil {
		return reencrypt.Stats{}, err
	}
	return re.Reencrypt(ctx, opt)
}

// DrainWrites writes every queue queued before it and then lets the inner
// saver finish the writes that began before (its own DrainWrites, when it
// has one). An erasure (vault.Forget) calls it after destroying a
// subject's keys: a write of the subject still queued is written now —
// and refused, its keys being gone — instead of after the erasure listed
// the subject's threads, where it would be stored outside the receipt
// (under the subject's new keys, once readmitted). It returns no
// thread's error: those surface on their threads and at Flush.
func (s *Saver) DrainWrites(ctx context.Context) error {
	if err := s.waitAll(ctx, false); err != nil {
		return err
	}
	if d, ok := s.inner.(interface{ DrainWrites(context.Context) error }); ok {
		return d.DrainWrites(ctx)
	}
	return nil
}

// RecordsInTx implements checkpointer.TxRecorder when the inner saver
// does: an audit record given with a Put or PutWrites
// (checkpointer.WithRecord) is queued with the write and inserted in the
// transaction that stores it, so that a queued write that fails, or is
// lost in a crash, leaves no record, as with the inner saver alone. Such
// writes are stored one by one, not in batches.
func (s *Saver) RecordsInTx() bool {
	r, ok := s.inner.(checkpointer.TxRecorder)
	return ok && r.RecordsInTx()
}
