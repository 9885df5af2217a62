package memory

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/internal/binding"
)

// prune is the core's Prune hook (core.Hooks), for checkpointer.Pruner. PruneKeepLatest keeps, in every
// namespace of each thread, the latest checkpoint, its pending writes and
// the values its channel versions reference; PruneDelete removes the
// threads. Unknown threads are ignored.
func (s *InMemorySaver) prune(_ context.Context, threadIDs []string, strategy checkpointer.PruneStrategy) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, thread := range threadIDs {
		if strategy == checkpointer.PruneDelete {
			delete(s.threads, thread)
			continue
		}
		for _, n := range s.threads[thread] {
			latest := n.latest()
			// A v<4 checkpoint reads its pending sends from its parent's
			// __pregel_tasks writes: those outlive the parent.
			sendsOf := ""
			if rec := n.checkpoints[latest]; rec != nil && rec.v < 4 {
				sendsOf = rec.parent
			}
			for id := range n.checkpoints {
				if id != latest {
					delete(n.checkpoints, id)
				}
			}
			for id, ws := range n.writes {
				switch id {
				case latest:
				case sendsOf:
					for k, w := range ws {
						if w.channel != checkpointer.ChannelTasks {
							delete(ws, k)
						}
					}
				default:
					delete(n.writes, id)
				}
			}
			n.reindex()
			n.collectBlobs()
		}
	}
	return nil
}

// deleteForRuns is the core's DeleteForRuns hook (core.Hooks): it removes, in every
// thread and namespace, the checkpoints whose metadata run_id is one of
// runIDs, with their pending writes and the values no remaining checkpoint
// references.
func (s *InMemorySaver) deleteForRuns(_ context.Context, runIDs []string) error {
	runs := make(map[string]bool, len(runIDs))
	for _, r := range runIDs {
		runs[r] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for thread, t := range s.threads {
		for ns, n := range t {
			var removed []string
			for id, rec := range n.checkpoints {
				if run, ok := rec.metadata["run_id"].(string); ok && runs[run] {
					delete(n.checkpoints, id)
					removed = append(removed, id)
				}
			}
			if len(removed) == 0 {
				continue
			}
			for _, id := range removed {
				n.dropWrites(id)
			}
			if len(n.checkpoints) == 0 {
				delete(t, ns)
				continue
			}
			n.reindex()
			n.collectBlobs()
		}
		if len(t) == 0 {
			delete(s.threads, thread)
		}
	}
	return nil
}

// dropWrites removes the pending writes of checkpoint id, which is no
// longer stored, except the __pregel_tasks writes a remaining v<4 child
// reads as its pending sends.
func (n *namespace) dropWrites(id string) {
	keepSends := false
	for _, rec := range n.checkpoints {
		if rec.parent == id && rec.v < 4 {
			keepSends = true
			break
		}
	}
	if !keepSends {
		delete(n.writes, id)
		return
	}
	for k, w := range n.writes[id] {
		if w.channel != checkpointer.ChannelTasks {
			delete(n.writes[id], k)
		}
	}
}

// collectBlobs removes the values no stored checkpoint of n references.
func (n *namespace) collectBlobs() {
	live := make(map[chanVersion]bool, len(n.blobs))
	for _, rec := range n.checkpoints {
		for ch, ver := range rec.versions {
			live[chanVersion{ch, ver}] = true
		}
	}
	for k := range n.blobs {
		if !live[k] {
			delete(n.blobs, k)
		}
	}
}

// copyThread is the core's CopyThread hook (core.Hooks): every checkpoint (with its id),
// namespace, value and pending write of src is copied to dst, whose existing
// entries with the same keys are overwritten. Values bound to their location
// by an encrypting serializer are re-bound to dst. Copying an unknown thread
// does nothing.
func (s *InMemorySaver) copyThread(ctx context.Context, srcThreadID, dstThreadID string) error {
	// Snapshot the source under the read lock; records and blob bytes are
	// immutable, so shallow copies of the maps suffice.
	type nsCopy struct {
		ns     string
		recs   []*record
		blobs  map[chanVersion]blob
		writes map[string][]*storedWrite
	}
	s.mu.RLock()
	var src []nsCopy
	for ns, n := range s.threads[srcThreadID] {
		c := nsCopy{ns: ns, blobs: make(map[chanVersion]blob, len(n.blobs)), writes: make(map[string][]*storedWrite, len(n.writes))}
		for _, rec := range n.checkpoints {
			c.recs = append(c.recs, rec)
		}
		for k, b := range n.blobs {
			c.blobs[k] = b
		}
		for id, ws := range n.writes {
			for _, w := range ws {
				c.writes[id] = append(c.writes[id], w)
			}
		}
		src = append(src, c)
	}
	s.mu.RUnlock()

	// Re-bind values outside the lock (a no-op for plain codecs).
	var fence binding.Fence
	for i := range src {
		c := &src[i]
		if !s.codec.Bound() {
			continue
		}
		for k, b := range c.blobs {
			from := binding.Blob{Thread: srcThreadID, NS: c.ns, Channel: k.channel, Version: k.version}
			to := from
			to.Thread = dstThreadID
			typ, data, err := s.codec.MoveFenced(ctx, from, to, b.typ, b.data, &fence)
			if err != nil {
				return fmt.Errorf("memory: copy channel %q: %w", k.channel, err)
			}
			c.blobs[k] = blob{typ, data}
		}
		for id, ws := range c.writes {
			for j, w := range ws {
				from := binding.Write{Thread: srcThreadID, NS: c.ns, Checkpoint: id, Task: w.task, Idx: w.idx, Channel: w.channel}
				to := from
				to.Thread = dstThreadID
				typ, data, err := s.codec.MoveFenced(ctx, from, to, w.value.typ, w.value.data, &fence)
				if err != nil {
					return fmt.Errorf("memory: copy write (%s, %d): %w", w.task, w.idx, err)
				}
				nw := *w
				nw.value = blob{typ, data}
				ws[j] = &nw
			}
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.codec.Check(ctx, &fence); err != nil {
		return fmt.Errorf("memory: copy thread: %w", err)
	}
	for _, c := range src {
		n := s.namespaceLocked(dstThreadID, c.ns)
		for _, rec := range c.recs {
			n.add(rec)
		}
		for k, b := range c.blobs {
			n.blobs[k] = b
		}
		for id, ws := range c.writes {
			m := n.writesOf(id)
			for _, w := range ws {
				m[taskIdx{w.task, w.idx}] = w
			}
		}
	}
	return nil
}
