package memory

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"slices"

	"github.com/memvault/memvault/checkpointer"
)

// ListThreads implements checkpointer.ThreadLister from a snapshot of the
// thread index; no value is decoded.
func (s *InMemorySaver) ListThreads(ctx context.Context) iter.Seq2[checkpointer.ThreadInfo, error] {
	return func(yield func(checkpointer.ThreadInfo, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(checkpointer.ThreadInfo{}, fmt.Errorf("memory: %w", err))
			return
		}
		s.mu.RLock()
		out := make([]checkpointer.ThreadInfo, 0, len(s.threads))
		for thread, t := range s.threads {
			ti := checkpointer.ThreadInfo{ThreadID: thread}
			for _, n := range t {
				ti.Checkpoints += len(n.checkpoints)
				ti.LatestCheckpointID = max(ti.LatestCheckpointID, n.latest())
			}
			if ti.Checkpoints > 0 {
				out = append(out, ti)
			}
		}
		s.mu.RUnlock()
		slices.SortFunc(out, func(a, b checkpointer.ThreadInfo) int {
			if c := cmp.Compare(b.LatestCheckpointID, a.LatestCheckpointID); c != 0 {
				return c
			}
			return cmp.Compare(a.ThreadID, b.ThreadID)
		})
		for _, ti := range out {
			if !yield(ti, nil) {
				return
			}
		}
	}
}
