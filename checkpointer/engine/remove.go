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

// newFront is the saver's argument checks and trivial cases of the
// management calls, the same on every driver, around its removals.
func (s *Saver) newFront() *core.Front {
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
	return s.front.DeleteThread(ctx, threadID)
}

// Prune implements checkpointer.Pruner. PruneKeepLatest keeps, in every
// namespace of each thread, the latest checkpoint, its writes and the
// values it references; PruneDelete removes the threads.
func (s *Saver) Prune(ctx context.Context, threadIDs []string, strategy checkpointer.PruneStrategy) error {
	return s.front.Prune(ctx, threadIDs, strategy)
}

// CopyThread implements checkpointer.Copier (see copy.go).
func (s *Saver) CopyThread(ctx context.Context, srcThreadID, dstThreadID string) error {
	return s.front.CopyThread(ctx, srcThreadID, dstThreadID)
}

// DeleteForRuns implements checkpointer.RunDeleter: the checkpoints whose
// metadata run_id is one of runIDs go, with their writes and the values no
// remaining checkpoint references.
func (s *Saver) DeleteForRuns(ctx context.Context, runIDs []string) error {
	return s.front.DeleteForRuns(ctx, runIDs)
}

// DeleteCheckpoint implements checkpointer.CheckpointDeleter.
func (s *Saver) DeleteCheckpoint(ctx context.Context, cfg checkpointer.Config) error {
	return s.front.DeleteCheckpoint(ctx, cfg)
}

func (s *Saver) update(ctx context.Context, fn func(tx checkpointer.DriverTx) error) error {
	if err := s.d.Update(ctx, fn); err != nil {
		return s.wrap(err)
	}
	return nil
}

func (s *Saver) deleteThread(ctx context.Context, thread string) error {
	if err := s.d.DeleteThreads(ctx, []string{thread}); err != nil {
		return s.wrap(err)
	}
	return nil
}

// remove runs one removal in a transaction: decide picks the rows to
// remove from the heads of sel.
func (s *Saver) remove(ctx context.Context, sel checkpointer.HeadSelector, decide func([]checkpointer.Head) []checkpointer.Removal) error {
	err := s.removal(ctx, sel, decide, func(tx checkpointer.DriverTx, rs []checkpointer.Removal) error {
		_, err := tx.Remove(ctx, rs, false)
		return err
	})
	if err != nil {
		return s.wrap(err)
	}
	return nil
}

// removal is the protocol of every removal: decide picks the rows to
// remove from the heads of sel, and apply removes them in one
// transaction. On a Serialized storage the heads are read in the
// transaction, where they stay true until it ends. On any other, they are
// read once before it (nothing to remove: no transaction), the picked
// checkpoints locked in it, and the heads read again after the lock —
// a put that continued one of them, which the lock waited for, is in them
// now and may change the decision; only locked rows go. A read of the
// heads in the transaction before the lock would see no more than the one
// before it: it would only cost another pass over the rows. The orphan
// write sets are looked for in the first read only: only locked rows go,
// and an orphan set the second read would add was not picked, so the
// second keeps the first's orphans that are still not stored (a write
// set is no checkpoint of its own to lock) and spares a SQL driver its
// pass over the writes.
func (s *Saver) removal(ctx context.Context, sel checkpointer.HeadSelector, decide func([]checkpointer.Head) []checkpointer.Removal,
	apply func(tx checkpointer.DriverTx, rs []checkpointer.Removal) error) error {
	var picked []checkpointer.Removal
	var orphans []checkpointer.Head
	if !s.caps.Serialized {
		heads, err := s.d.Heads(ctx, sel)
		if err != nil {
			return err
		}
		for _, h := range heads {
			if !h.Stored {
				orphans = append(orphans, h)
			}
		}
		if picked = decide(heads); len(picked) == 0 {
			return nil
		}
	}
	return s.d.Update(ctx, func(tx checkpointer.DriverTx) error {
		var heads []checkpointer.Head
		var err error
		if s.caps.Serialized {
			heads, err = tx.Heads(ctx, sel)
		} else {
			again := sel
			again.Orphans = false
			if heads, err = tx.Lock(ctx, picked, again); err == nil {
				heads = withOrphans(heads, orphans)
			}
		}
		if err != nil {
			return err
		}
		rs := decide(heads)
		if !s.caps.Serialized {
			rs = intersect(rs, picked)
		}
		if len(rs) == 0 {
			return nil
		}
		return apply(tx, rs)
	})
}

// withOrphans adds to heads the orphan write sets of orphans that heads
// does not hold, stored or not.
func withOrphans(heads, orphans []checkpointer.Head) []checkpointer.Head {
	if len(orphans) == 0 {
		return heads
	}
	held := make(map[[3]string]bool, len(orphans))
	for _, h := range orphans {
		held[[3]string{h.Thread, h.NS, h.ID}] = true
	}
	for _, h := range heads {
		delete(held, [3]string{h.Thread, h.NS, h.ID})
	}
	for _, h := range orphans {
		if held[[3]string{h.Thread, h.NS, h.ID}] {
			heads = append(heads, h)
		}
	}
	return heads
}

// intersect keeps, of each removal of rs, the ids also in locked. Both
// come from decide, so their removals are in (thread, namespace) order and
// their ids in id order: one merge, no index of the locked ids.
func intersect(rs, locked []checkpointer.Removal) []checkpointer.Removal {
	var out []checkpointer.Removal
	j := 0
	for _, r := range rs {
		for j < len(locked) && cmp.Or(strings.Compare(locked[j].Thread, r.Thread), strings.Compare(locked[j].NS, r.NS)) < 0 {
			j++
		}
		if j == len(locked) || locked[j].Thread != r.Thread || locked[j].NS != r.NS {
			continue
		}
		held := locked[j].IDs
		ids := slices.DeleteFunc(slices.Clone(r.IDs), func(id string) bool {
			_, found := slices.BinarySearch(held, id)
			return !found
		})
		if len(ids) > 0 {
			r.IDs = ids
			out = append(out, r)
		}
	}
	return out
}

func (s *Saver) prune(ctx context.Context, threads []string, strategy checkpointer.PruneStrategy) error {
	if strategy == checkpointer.PruneDelete {
		if err := s.d.DeleteThreads(ctx, threads); err != nil {
			return s.wrap(err)
		}
		return nil
	}
	if s.caps.KeepLatest {
		// The same rule, run by the storage in one call.
		k := checkpointer.KeepLatest{Threads: slices.Compact(slices.Sorted(slices.Values(threads))),
			SendsChannel: checkpointer.ChannelTasks, SendsBefore: sendsBefore}
		if err := s.d.(checkpointer.LatestKeeper).KeepLatest(ctx, k); err != nil {
			return s.wrap(err)
		}
		return nil
	}
	// Orphan write sets go too.
	return s.remove(ctx, checkpointer.HeadSelector{Threads: threads, Orphans: true}, func(heads []checkpointer.Head) []checkpointer.Removal {
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
		return rs
	})
}

func (s *Saver) deleteForRuns(ctx context.Context, runIDs []string) error {
	runs := make(map[string]bool, len(runIDs))
	for _, r := range runIDs {
		runs[r] = true
	}
	return s.remove(ctx, checkpointer.HeadSelector{RunIDs: runIDs}, func(heads []checkpointer.Head) []checkpointer.Removal {
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
		return rs
	})
}

func (s *Saver) deleteCheckpoint(ctx context.Context, thread, ns, id string) error {
	return s.remove(ctx, checkpointer.HeadSelector{Threads: []string{thread}, NS: &ns}, func(heads []checkpointer.Head) []checkpointer.Removal {
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
		return []checkpointer.Removal{{Thread: thread, NS: ns, IDs: ids, KeepSends: sendsKept(ids, kept)}}
	})
}

// sendsBefore is the first checkpoint format that keeps its pending
// sends as its own writes: one before it reads its parent's ChannelTasks
// writes.
const sendsBefore = 4

// sendsKept returns the ids among removed whose ChannelTasks writes must
// stay: the parent of a kept checkpoint of a format before 4 reads its
// pending sends from them.
func sendsKept(removed []string, kept []checkpointer.Head) []string {
	// Only kept heads of a format before 4 matter, and there are none on a
	// thread written by LangGraph 0.2+ or memvault: that case is one pass
	// over kept. Otherwise a set of removed keeps the whole O(kept+removed),
	// not O(kept × removed) as a prune of a long legacy thread would be.
	var parents []string
	for _, h := range kept {
		if h.Parent != "" && h.V < sendsBefore {
			parents = append(parents, h.Parent)
		}
	}
	if len(parents) == 0 {
		return nil
	}
	gone := make(map[string]bool, len(removed))
	for _, id := range removed {
		gone[id] = true
	}
	var out []string
	for _, p := range parents {
		if gone[p] {
			out = append(out, p)
			gone[p] = false // once
		}
	}
	return out
}

// byNamespace groups heads by (thread, namespace), each group in id order,
// groups in (thread, namespace) order. Heads a driver returns in that order
// are not sorted again; others are grouped first and each group sorted by
// id alone: a sort of 20 000 heads by three strings was a fifth of a large
// prune's client time.
func byNamespace(heads []checkpointer.Head) [][]checkpointer.Head {
	if !slices.IsSortedFunc(heads, compareHeads) {
		heads = grouped(heads)
	}
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

// grouped returns heads in compareHeads order: bucketed by namespace, the
// buckets sorted, each bucket sorted by id.
func grouped(heads []checkpointer.Head) []checkpointer.Head {
	index := map[[2]string]int{}
	var groups [][]checkpointer.Head
	for _, h := range heads {
		k := [2]string{h.Thread, h.NS}
		g, ok := index[k]
		if !ok {
			g = len(groups)
			index[k] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], h)
	}
	slices.SortFunc(groups, func(a, b []checkpointer.Head) int { return compareHeads(a[0], b[0]) })
	out := make([]checkpointer.Head, 0, len(heads))
	for _, g := range groups {
		if !slices.IsSortedFunc(g, compareHeads) {
			slices.SortFunc(g, func(a, b checkpointer.Head) int { return strings.Compare(a.ID, b.ID) })
		}
		out = append(out, g...)
	}
	return out
}

// compareHeads orders heads by thread, namespace and id, comparing only
// as far as needed.
func compareHeads(a, b checkpointer.Head) int {
	if c := strings.Compare(a.Thread, b.Thread); c != 0 {
		return c
	}
	if c := strings.Compare(a.NS, b.NS); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
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
	// Orphan write sets go only with an idle thread.
	sel := checkpointer.HeadSelector{Threads: threads, Orphans: rule.Floor != ""}
	// The idle threads go whole; the rest keep their newest checkpoints.
	// Both are one decision, taken (and on a storage that is not
	// serialized, taken again after the lock) on the same heads.
	var idle []string
	decide := func(heads []checkpointer.Head) []checkpointer.Removal {
		idle = idleThreads(threads, heads, rule.Floor)
		return sweepRemovals(heads, idle, rule)
	}
	err := s.removal(ctx, sel, decide, func(tx checkpointer.DriverTx, rs []checkpointer.Removal) error {
		rep = checkpointer.SweepReport{}
		if len(idle) > 0 && s.caps.Serialized {
			// Nothing else writes meanwhile: the idle threads go whole.
			idleSet := map[string]bool{}
			for _, t := range idle {
				idleSet[t] = true
			}
			rs = slices.DeleteFunc(rs, func(r checkpointer.Removal) bool { return idleSet[r.Thread] })
			r, err := tx.DeleteThreads(ctx, idle, dryRun)
			if err != nil {
				return err
			}
			r.ThreadsDeleted = int64(len(idle))
			rep.Add(r)
		} else if len(idle) > 0 {
			// Other writers: only what was locked goes (rs). A checkpoint
			// a put stored after the lock — the first of a new namespace,
			// say, which locks nothing — stays, with its values.
			rep.ThreadsDeleted = int64(len(idle))
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

// idleThreads returns the threads of heads whose checkpoint ids are all
// datable and sort before floor ("" : none are).
func idleThreads(threads []string, heads []checkpointer.Head, floor string) []string {
	if floor == "" {
		return nil
	}
	idle := map[string]bool{}
	for _, h := range heads {
		if !h.Stored {
			continue
		}
		if _, seen := idle[h.Thread]; !seen {
			idle[h.Thread] = true
		}
		if !checkpointer.IsDatableID(h.ID) || h.ID >= floor {
			idle[h.Thread] = false
		}
	}
	var out []string
	for _, t := range threads {
		if idle[t] {
			out = append(out, t)
		}
	}
	return out
}

// sweepRemovals is a sweep's decision: every checkpoint and write set of
// the idle threads (so that they are locked), and in the other threads every
// checkpoint of a namespace beyond its KeepLatest newest, with the
// ChannelTasks writes a kept checkpoint before format 4 reads.
func sweepRemovals(heads []checkpointer.Head, idle []string, rule core.SweepRule) []checkpointer.Removal {
	var rs []checkpointer.Removal
	for _, ns := range byNamespace(heads) {
		stored := slices.DeleteFunc(slices.Clone(ns), func(h checkpointer.Head) bool { return !h.Stored })
		r := checkpointer.Removal{Thread: ns[0].Thread, NS: ns[0].NS}
		keep := len(stored)
		switch {
		case slices.Contains(idle, r.Thread):
			// Everything goes, the writes of checkpoints not stored too.
			for _, h := range ns {
				r.IDs = append(r.IDs, h.ID)
			}
			rs = append(rs, r)
			continue
		case rule.KeepLatest > 0:
			keep = min(keep, rule.KeepLatest)
		}
		cut := len(stored) - keep
		for _, h := range stored[:cut] {
			r.IDs = append(r.IDs, h.ID)
		}
		if len(r.IDs) > 0 {
			r.KeepSends = sendsKept(r.IDs, stored[cut:])
			rs = append(rs, r)
		}
	}
	return rs
}
