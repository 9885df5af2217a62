package memory

import (
	"context"
	"slices"
	"strings"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/internal/core"
)

// Sweep implements checkpointer.Sweeper: the core pages through the
// threads; each batch is applied under the saver's write lock.
func (s *InMemorySaver) Sweep(ctx context.Context, policy checkpointer.RetentionPolicy, opt checkpointer.SweepOptions) (checkpointer.SweepReport, error) {
	return core.Sweep(ctx, "memory", core.SweepHooks{Threads: s.sweepThreads, Batch: s.sweepBatch}, policy, opt)
}

// sweepThreads is the Threads hook of Sweep: the ids of threads holding
// a checkpoint, after after, ascending.
func (s *InMemorySaver) sweepThreads(_ context.Context, after string, limit int) ([]string, error) {
	s.mu.RLock()
	var ids []string
	for thread, t := range s.threads {
		if thread <= after {
			continue
		}
		for _, n := range t {
			if len(n.checkpoints) > 0 {
				ids = append(ids, thread)
				break
			}
		}
	}
	s.mu.RUnlock()
	slices.Sort(ids)
	return ids[:min(limit, len(ids))], nil
}

// sweepBatch is the Batch hook of Sweep. A dry run counts what it would
// remove and changes nothing.
func (s *InMemorySaver) sweepBatch(_ context.Context, threads []string, rule core.SweepRule, dryRun bool) (checkpointer.SweepReport, error) {
	var rep checkpointer.SweepReport
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, thread := range threads {
		t := s.threads[thread]
		if len(t) == 0 {
			continue
		}
		if rule.Floor != "" && idle(t, rule.Floor) {
			rep.ThreadsDeleted++
			for _, n := range t {
				rep.Checkpoints += int64(len(n.checkpoints))
				rep.Blobs += int64(len(n.blobs))
				for _, ws := range n.writes {
					rep.Writes += int64(len(ws))
				}
			}
			if !dryRun {
				delete(s.threads, thread)
			}
			continue
		}
		if rule.KeepLatest <= 0 {
			continue
		}
		for _, n := range t {
			if len(n.ids) <= rule.KeepLatest {
				continue
			}
			r := n.keepLatest(rule.KeepLatest, dryRun)
			rep.Add(r)
		}
	}
	return rep, nil
}

// idle reports whether every checkpoint id of thread t is datable and
// sorts before floor.
func idle(t map[string]*namespace, floor string) bool {
	seen := false
	for _, n := range t {
		for _, id := range n.ids {
			if !checkpointer.IsDatableID(id) || strings.Compare(id, floor) >= 0 {
				return false
			}
			seen = true
		}
	}
	return seen
}

// keepLatest removes all but the newest keep checkpoints of n, their
// writes (except the __pregel_tasks writes a kept v<4 checkpoint reads its
// pending sends from) and the values no kept checkpoint references, and
// counts them; with dryRun it only counts.
func (n *namespace) keepLatest(keep int, dryRun bool) checkpointer.SweepReport {
	var rep checkpointer.SweepReport
	cut := len(n.ids) - keep
	doomed, kept := n.ids[:cut], n.ids[cut:]
	sendsOf := map[string]bool{}
	live := map[chanVersion]bool{}
	for _, id := range kept {
		rec := n.checkpoints[id]
		if rec.v < 4 && rec.parent != "" {
			sendsOf[rec.parent] = true
		}
		for ch, ver := range rec.versions {
			live[chanVersion{ch, ver}] = true
		}
	}
	rep.Checkpoints = int64(len(doomed))
	for _, id := range doomed {
		for k, w := range n.writes[id] {
			if sendsOf[id] && w.channel == checkpointer.ChannelTasks {
				continue
			}
			rep.Writes++
			if !dryRun {
				delete(n.writes[id], k)
			}
		}
		if !dryRun {
			if len(n.writes[id]) == 0 {
				delete(n.writes, id)
			}
			delete(n.checkpoints, id)
		}
	}
	for k := range n.blobs {
		if !live[k] {
			rep.Blobs++
			if !dryRun {
				delete(n.blobs, k)
			}
		}
	}
	if !dryRun {
		n.ids = slices.Clone(kept)
	}
	return rep
}
