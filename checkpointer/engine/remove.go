package engine

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/internal/core"
)

// This file holds the one copy of the removal rules: which checkpoints a
// delete, prune, run deletion or retention sweep removes, and which of
// their writes stay. Drivers are handed the result (checkpointer.Removal)
// inside the transaction that read the heads, so a put committed while a
// removal waited is seen by it.

// front checks the management calls' arguments the same way on every
// driver and settles the trivial cases.
func (s *Saver) front() *core.Front {
	return core.NewFront(s.name, core.Hooks{
		DeleteThread:     s.deleteThread,
		Prune:            s.prune,
		CopyThread:       s.copyThread,
		DeleteForRuns:    s.deleteForRuns,
		DeleteCheckpoint: s.deleteCheckpoint,
	})
}

// DeleteThread implements checkpointer.Saver.
func (s *Saver) DeleteThread(ctx context.Context, threadID string) error {
	return s.front().DeleteThread(ctx, threadID)
}

// Prune implements checkpointer.Pruner. PruneKeepLatest keeps, in every
// namespace of each thread, the latest checkpoint, its writes and the
// values it references; PruneDelete removes the threads.
func (s *Saver) Prune(ctx context.Context, threadIDs []string, strategy checkpointer.PruneStrategy) error {
	return s.front().Prune(ctx, threadIDs, strategy)
}

// CopyThread implements checkpointer.Copier (see copy.go).
func (s *Saver) CopyThread(ctx context.Context, srcThreadID, dstThreadID string) error {
	return s.front().CopyThread(ctx, srcThreadID, dstThreadID)
}

// DeleteForRuns implements checkpointer.RunDeleter: the checkpoints whose
// metadata run_id is one of runIDs go, with their writes and the values no
// remaining checkpoint references.
func (s *Saver) DeleteForRuns(ctx context.Context, runIDs []string) error {
	return s.front().DeleteForRuns(ctx, runIDs)
}

// DeleteCheckpoint implements checkpointer.CheckpointDeleter.
func (s *Saver) DeleteCheckpoint(ctx context.Context, cfg checkpointer.Config) error {
	return s.front().DeleteCheckpoint(ctx, cfg)
}

func (s *Saver) update(ctx context.Context, fn func(tx checkpointer.DriverTx) error) error {
	if err := s.d.Update(ctx, fn); err != nil {
		return s.wrap(err)
	}
	return nil
}

func (s *Saver) deleteThread(ctx context.Context, thread string) error {
	return s.update(ctx, func(tx checkpointer.DriverTx) error {
		_, err := tx.DeleteThreads(ctx, []string{thread}, false)
		return err
	})
}

func (s *Saver) prune(ctx context.Context, threads []string, strategy checkpointer.PruneStrategy) error {
	return s.update(ctx, func(tx checkpointer.DriverTx) error {
		if strategy == checkpointer.PruneDelete {
			_, err := tx.DeleteThreads(ctx, threads, false)
			return err
		}
		heads, err := tx.Heads(ctx, checkpointer.HeadSelector{Threads: threads})
		if err != nil {
			return err
		}
		var rs []checkpointer.Removal
		for _, ns := range byNamespace(heads) {
			// The latest checkpoint stays; everything else of the
			// namespace goes, orphan writes included.
			var latest *checkpointer.Head
			for i := range ns {
				if h := &ns[i]; h.Stored && (latest == nil || h.ID > latest.ID) {
					latest = h
				}
			}
			r := checkpointer.Removal{Thread: ns[0].Thread, NS: ns[0].NS}
			for _, h := range ns {
				if latest == nil || h.ID != latest.ID {
					r.IDs = append(r.IDs, h.ID)
				}
			}
			if latest != nil {
				r.KeepSends = sendsKept(r.IDs, []checkpointer.Head{*latest})
			}
			if len(r.IDs) > 0 {
				rs = append(rs, r)
			}
		}
		_, err = tx.Remove(ctx, rs, false)
		return err
	})
}

func (s *Saver) deleteForRuns(ctx context.Context, runIDs []string) error {
	runs := make(map[string]bool, len(runIDs))
	for _, r := range runIDs {
		runs[r] = true
	}
	return s.update(ctx, func(tx checkpointer.DriverTx) error {
		heads, err := tx.Heads(ctx, checkpointer.HeadSelector{RunIDs: runIDs})
		if err != nil {
			return err
		}
		var rs []checkpointer.Removal
		for _, ns := range byNamespace(heads) {
			r := checkpointer.Removal{Thread: ns[0].Thread, NS: ns[0].NS}
			var kept []checkpointer.Head
			for _, h := range ns {
				switch {
				case h.Stored && h.RunID != "" && runs[h.RunID]:
					r.IDs = append(r.IDs, h.ID)
				case h.Stored:
					kept = append(kept, h)
				}
			}
			if len(r.IDs) > 0 {
				r.KeepSends = sendsKept(r.IDs, kept)
				rs = append(rs, r)
			}
		}
		_, err = tx.Remove(ctx, rs, false)
		return err
	})
}

func (s *Saver) deleteCheckpoint(ctx context.Context, thread, ns, id string) error {
	return s.update(ctx, func(tx checkpointer.DriverTx) error {
		heads, err := tx.Heads(ctx, checkpointer.HeadSelector{Threads: []string{thread}, NS: &ns})
		if err != nil {
			return err
		}
		found := false
		var kept []checkpointer.Head
		for _, h := range heads {
			switch {
			case !h.Stored:
			case h.ID == id:
				found = true
			default:
				kept = append(kept, h)
			}
		}
		if !found {
			return nil
		}
		ids := []string{id}
		_, err = tx.Remove(ctx, []checkpointer.Removal{{Thread: thread, NS: ns, IDs: ids, KeepSends: sendsKept(ids, kept)}}, false)
		return err
	})
}

// sendsKept returns the ids among removed whose ChannelTasks writes must
// stay: the parent of a kept checkpoint of a format before 4 reads its
// pending sends from them.
func sendsKept(removed []string, kept []checkpointer.Head) []string {
	var out []string
	for _, h := range kept {
		if h.Parent != "" && h.V < 4 && slices.Contains(removed, h.Parent) && !slices.Contains(out, h.Parent) {
			out = append(out, h.Parent)
		}
	}
	return out
}

// byNamespace groups heads by (thread, namespace), each group in id order,
// groups in (thread, namespace) order.
func byNamespace(heads []checkpointer.Head) [][]checkpointer.Head {
	slices.SortFunc(heads, func(a, b checkpointer.Head) int {
		return cmp.Or(strings.Compare(a.Thread, b.Thread), strings.Compare(a.NS, b.NS), strings.Compare(a.ID, b.ID))
	})
	var out [][]checkpointer.Head
	for i := 0; i < len(heads); {
		j := i + 1
		for j < len(heads) && heads[j].Thread == heads[i].Thread && heads[j].NS == heads[i].NS {
			j++
		}
		out = append(out, heads[i:j:j])
		i = j
	}
	return out
}

// Sweep implements checkpointer.Sweeper: the threads are paged through in
// key order, each page one driver transaction. A thread whose checkpoint
// ids are all datable and older than the idle floor goes whole; in the
// others every namespace keeps its KeepLatest newest checkpoints, their
// writes, the ChannelTasks writes a kept checkpoint before format 4 reads,
// and the values they reference.
func (s *Saver) Sweep(ctx context.Context, policy checkpointer.RetentionPolicy, opt checkpointer.SweepOptions) (checkpointer.SweepReport, error) {
	return core.Sweep(ctx, s.name, core.SweepHooks{Threads: s.d.Threads, Batch: s.sweepBatch, DefaultBatch: s.batch}, policy, opt)
}

func (s *Saver) sweepBatch(ctx context.Context, threads []string, rule core.SweepRule, dryRun bool) (checkpointer.SweepReport, error) {
	var rep checkpointer.SweepReport
	err := s.d.Update(ctx, func(tx checkpointer.DriverTx) error {
		rep = checkpointer.SweepReport{}
		heads, err := tx.Heads(ctx, checkpointer.HeadSelector{Threads: threads})
		if err != nil {
			return err
		}
		idle := map[string]bool{}
		if rule.Floor != "" {
			for _, t := range threads {
				idle[t] = true
			}
			seen := map[string]bool{}
			for _, h := range heads {
				if !h.Stored {
					continue
				}
				seen[h.Thread] = true
				if !checkpointer.IsDatableID(h.ID) || h.ID >= rule.Floor {
					idle[h.Thread] = false
				}
			}
			for t := range idle {
				idle[t] = idle[t] && seen[t]
			}
		}
		var gone []string
		for _, t := range threads {
			if idle[t] {
				gone = append(gone, t)
			}
		}
		if len(gone) > 0 {
			r, err := tx.DeleteThreads(ctx, gone, dryRun)
			if err != nil {
				return err
			}
			r.ThreadsDeleted = int64(len(gone))
			rep.Add(r)
		}
		if rule.KeepLatest <= 0 {
			return nil
		}
		var rs []checkpointer.Removal
		for _, ns := range byNamespace(heads) {
			if idle[ns[0].Thread] {
				continue
			}
			stored := slices.DeleteFunc(slices.Clone(ns), func(h checkpointer.Head) bool { return !h.Stored })
			if len(stored) <= rule.KeepLatest {
				continue
			}
			cut := len(stored) - rule.KeepLatest
			r := checkpointer.Removal{Thread: ns[0].Thread, NS: ns[0].NS}
			for _, h := range stored[:cut] {
				r.IDs = append(r.IDs, h.ID)
			}
			r.KeepSends = sendsKept(r.IDs, stored[cut:])
			rs = append(rs, r)
		}
		if len(rs) == 0 {
			return nil
		}
		r, err := tx.Remove(ctx, rs, dryRun)
		rep.Add(r)
		return err
	})
	return rep, err
}
