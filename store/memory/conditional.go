package memory

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/internal/items"
)

// PutIf implements store.ConditionalPutter: the check and the write happen
// under the store's write lock.
func (s *Store) PutIf(ctx context.Context, ns store.Namespace, key string, value map[string]any, cond store.PutCondition, opts ...store.PutOption) error {
	p, err := items.StartPutIf(ctx, s.b, ns, key, value, opts, newPut)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b.Closed() {
		return fmt.Errorf("memory: %w", store.ErrClosed)
	}
	now := s.b.Now()
	cur, ok := s.items[p.k]
	live := ok && s.visible(cur, now.UnixNano())
	var updated = now
	if ok {
		updated = cur.item.UpdatedAt
	}
	if !cond.Holds(live, updated) {
		return fmt.Errorf("memory: %w", store.ErrConflict)
	}
	s.apply(p, now)
	return nil
}
