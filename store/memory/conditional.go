package memory

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/store"
)

var _ store.ConditionalPutter = (*Store)(nil)

// PutIf implements store.ConditionalPutter: the check and the write happen
// under the store's write lock.
func (s *Store) PutIf(ctx context.Context, ns store.Namespace, key string, value map[string]any, cond store.PutCondition, opts ...store.PutOption) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	ip, err := s.cfg.PlanPutIf(ctx, ns, key, value, opts)
	if err != nil {
		return err
	}
	p := newPut(ip)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return fmt.Errorf("memory: %w", store.ErrClosed)
	}
	now := s.now()
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
