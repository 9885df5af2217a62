package memory

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/checkpointer/internal/checks"

	"github.com/memvault/memvault/checkpointer"
)

var _ checkpointer.CheckpointDeleter = (*InMemorySaver)(nil)

// DeleteCheckpoint implements checkpointer.CheckpointDeleter.
func (s *InMemorySaver) DeleteCheckpoint(ctx context.Context, cfg checkpointer.Config) error {
	if err := checks.ValidateDeleteCheckpoint(cfg); err != nil {
		return fmt.Errorf("memory: delete checkpoint: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.threads[cfg.ThreadID]
	n := t[cfg.CheckpointNS]
	if n == nil {
		return nil
	}
	if _, ok := n.checkpoints[cfg.CheckpointID]; !ok {
		return nil
	}
	delete(n.checkpoints, cfg.CheckpointID)
	n.dropWrites(cfg.CheckpointID)
	if len(n.checkpoints) == 0 {
		delete(t, cfg.CheckpointNS)
		if len(t) == 0 {
			delete(s.threads, cfg.ThreadID)
		}
		return nil
	}
	n.reindex()
	n.collectBlobs()
	return nil
}
