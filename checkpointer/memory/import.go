package memory

import (
	"context"
	"fmt"
	"maps"

	"github.com/memvault/memvault/checkpointer/internal/core"
	"github.com/memvault/memvault/internal/binding"

	"github.com/memvault/memvault/checkpointer"
)

// ImportThread implements checkpointer.ThreadImporter by building, then
// committing: items are put into a scratch saver (which validates and
// serializes every value), and only when all succeeded are its rows copied
// into this saver, under the lock, in one step. Versions are kept as they
// are (the memory saver stores them as given).
func (s *InMemorySaver) ImportThread(ctx context.Context, items []checkpointer.ImportCheckpoint) error {
	scratch := newSaver(s.serde, s.style, &storage{threads: map[string]map[string]*namespace{}})
	for _, it := range items {
		if err := core.PutImportItem(ctx, scratch, it); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	var fence binding.Fence
	for thread := range scratch.threads {
		if err := s.codec.FenceThread(ctx, thread, &fence); err != nil {
			return fmt.Errorf("memory: %w", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.codec.Check(ctx, &fence); err != nil {
		return fmt.Errorf("memory: import: %w", err)
	}
	for thread, nss := range scratch.threads {
		for ns, src := range nss {
			dst := s.namespaceLocked(thread, ns)
			maps.Copy(dst.blobs, src.blobs)
			for _, id := range src.ids {
				dst.add(src.checkpoints[id])
			}
			for id, ws := range src.writes {
				have := dst.writesOf(id)
				// PutWrites' rule: a regular write keeps its first value,
				// a special channel's is replaced.
				for k, w := range ws {
					if _, exists := have[k]; exists && !core.IsSpecialChannel(w.channel) {
						continue
					}
					have[k] = w
				}
			}
		}
	}
	return nil
}
