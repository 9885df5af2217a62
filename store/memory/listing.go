package memory

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/memvault/memvault/store"
)

// listItems is the store core's ListItems hook (items.Hooks).
func (s *Store) listItems(_ context.Context, prefix, after string, limit int, now time.Time) ([]store.Item, error) {
	s.mu.RLock()
	var entries []*entry
	for k, e := range s.items {
		if k.ns == prefix && k.key > after && s.visible(e, now.UnixNano()) {
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

// deletePrefix is the store core's DeletePrefix hook (items.Hooks).
func (s *Store) deletePrefix(_ context.Context, prefix store.Namespace) (int, error) {
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
