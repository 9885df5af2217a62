package memory

import (
	"context"
	"slices"
	"strings"

	"github.com/memvault/memvault/store"
)

// ListItems implements store.Lister.
func (s *Store) ListItems(ctx context.Context, ns store.Namespace, opt store.ListItemsOptions) ([]store.Item, error) {
	prefix, limit, err := s.b.StartListItems(ctx, ns, opt)
	if err != nil {
		return nil, err
	}
	want := prefix
	now := s.b.Now()
	s.mu.RLock()
	var entries []*entry
	for k, e := range s.items {
		if k.ns == want && k.key > opt.After && s.visible(e, now.UnixNano()) {
			entries = append(entries, e)
		}
	}
	slices.SortFunc(entries, func(a, b *entry) int { return strings.Compare(a.item.Key, b.item.Key) })
	entries = entries[:min(len(entries), limit)]
	out := make([]store.Item, len(entries))
	for i, e := range entries {
		out[i] = s.read(e, now, false)
	}
	s.mu.RUnlock()
	return out, nil
}

// DeletePrefix implements store.PrefixDeleter.
func (s *Store) DeletePrefix(ctx context.Context, prefix store.Namespace) (int, error) {
	if err := s.b.StartDeletePrefix(ctx, prefix); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k, e := range s.items {
		if e.item.Namespace.HasPrefix(prefix) {
			delete(s.items, k)
			n++
		}
	}
	return n, nil
}
