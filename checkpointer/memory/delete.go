package memory

import (
	"context"
)

// deleteCheckpoint is the core's DeleteCheckpoint hook (core.Hooks).
func (s *InMemorySaver) deleteCheckpoint(_ context.Context, thread, ns, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.threads[thread]
	n := t[ns]
	if n == nil {
		return nil
	}
	if _, ok := n.checkpoints[id]; !ok {
		return nil
	}
	delete(n.checkpoints, id)
	n.dropWrites(id)
	if len(n.checkpoints) == 0 {
		delete(t, ns)
		if len(t) == 0 {
			delete(s.threads, thread)
		}
		return nil
	}
	n.reindex()
	n.collectBlobs()
	return nil
}
