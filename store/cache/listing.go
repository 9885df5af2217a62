package cache

import (
	"context"
	"errors"
	"fmt"

	"github.com/memvault/memvault/store"
)

// ListItems passes through to the inner store; it fails with
// errors.ErrUnsupported when the inner store is not a store.Lister.
func (s *Store) ListItems(ctx context.Context, ns store.Namespace, opt store.ListItemsOptions) ([]store.Item, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	l, ok := s.inner.(store.Lister)
	if !ok {
		return nil, fmt.Errorf("cache: inner store %T cannot list items: %w", s.inner, errors.ErrUnsupported)
	}
	return l.ListItems(ctx, ns, opt)
}

// DeletePrefix deletes in the inner store and drops every cached result
// (the cache does not index keys by namespace); it fails with
// errors.ErrUnsupported when the inner store is not a store.PrefixDeleter.
func (s *Store) DeletePrefix(ctx context.Context, prefix store.Namespace) (int, error) {
	if err := s.check(ctx); err != nil {
		return 0, err
	}
	d, ok := s.inner.(store.PrefixDeleter)
	if !ok {
		return 0, fmt.Errorf("cache: inner store %T cannot delete a prefix: %w", s.inner, errors.ErrUnsupported)
	}
	n, err := d.DeletePrefix(ctx, prefix)
	s.Purge()
	return n, err
}

// PutIf passes through to the inner store (the condition is checked there,
// never against a cached copy) and forgets the cached result; it fails with
// errors.ErrUnsupported when the inner store is not a
// store.ConditionalPutter.
func (s *Store) PutIf(ctx context.Context, ns store.Namespace, key string, value map[string]any, cond store.PutCondition, opts ...store.PutOption) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	c, ok := s.inner.(store.ConditionalPutter)
	if !ok {
		return fmt.Errorf("cache: inner store %T cannot put conditionally: %w", s.inner, errors.ErrUnsupported)
	}
	err := c.PutIf(ctx, ns, key, value, cond, opts...)
	s.invalidate(cacheKey{ns.String(), key})
	return err
}
