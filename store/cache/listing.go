package cache

import (
	"context"

	"github.com/memvault/memvault/store"
)

// cacLister is the cache's store.Lister, for an inner Lister.
type cacLister struct{ s *cached }

// ListItems passes through to the inner store.
func (c cacLister) ListItems(ctx context.Context, ns store.Namespace, opt store.ListItemsOptions) ([]store.Item, error) {
	if err := c.s.check(ctx); err != nil {
		return nil, err
	}
	return c.s.inner.(store.Lister).ListItems(ctx, ns, opt)
}

// cacPrefixDeleter is the cache's store.PrefixDeleter, for an inner
// PrefixDeleter.
type cacPrefixDeleter struct{ s *cached }

// DeletePrefix deletes in the inner store and drops every cached result
// (the cache does not index keys by namespace).
func (c cacPrefixDeleter) DeletePrefix(ctx context.Context, prefix store.Namespace) (int, error) {
	if err := c.s.check(ctx); err != nil {
		return 0, err
	}
	n, err := c.s.inner.(store.PrefixDeleter).DeletePrefix(ctx, prefix)
	c.s.Purge()
	return n, err
}

// cacConditionalPutter is the cache's store.ConditionalPutter, for an
// inner ConditionalPutter.
type cacConditionalPutter struct{ s *cached }

// PutIf passes through to the inner store (the condition is checked there,
// never against a cached copy) and forgets the cached result.
func (c cacConditionalPutter) PutIf(ctx context.Context, ns store.Namespace, key string, value map[string]any, cond store.PutCondition, opts ...store.PutOption) error {
	if err := c.s.check(ctx); err != nil {
		return err
	}
	err := c.s.inner.(store.ConditionalPutter).PutIf(ctx, ns, key, value, cond, opts...)
	c.s.invalidate(cacheKey{ns.String(), key})
	return err
}
