package engine

import (
	"context"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/internal/items"
)

// The public methods below are the core's (items.Front): one-op batches of
// Batch, so that they behave exactly as a batch does, and ListItems and
// DeletePrefix with their checks around the engine's storage operation. A
// store that embeds an Engine may override any of them with a fused fast
// path of its own.

// Put stores value at (ns, key), replacing any item there (see
// store.Store). A nil value is an error (use Delete).
func (e *Engine) Put(ctx context.Context, ns store.Namespace, key string, value map[string]any, opts ...store.PutOption) error {
	return e.front.Put(ctx, ns, key, value, opts...)
}

// Delete removes the item at (ns, key), if any.
func (e *Engine) Delete(ctx context.Context, ns store.Namespace, key string) error {
	return e.front.Delete(ctx, ns, key)
}

// Search lists the items under prefix, ranked by a query when the store
// has an index (see store.Store).
func (e *Engine) Search(ctx context.Context, prefix store.Namespace, opt store.SearchOptions) ([]store.SearchItem, error) {
	return e.front.Search(ctx, prefix, opt)
}

// ListNamespaces lists the namespaces holding items (see store.Store).
func (e *Engine) ListNamespaces(ctx context.Context, opt store.ListNamespacesOptions) ([]store.Namespace, error) {
	return e.front.ListNamespaces(ctx, opt)
}

// ListItems implements store.Lister.
func (e *Engine) ListItems(ctx context.Context, ns store.Namespace, opt store.ListItemsOptions) ([]store.Item, error) {
	return e.front.ListItems(ctx, ns, opt)
}

// DeletePrefix implements store.PrefixDeleter.
func (e *Engine) DeletePrefix(ctx context.Context, prefix store.Namespace) (int, error) {
	return e.front.DeletePrefix(ctx, prefix)
}

// init lends the drivers of this module e's core (items.EngineBase) for
// their operations beyond the seam (setup, re-embedding, re-encryption),
// without a function of this package's API naming an internal type.
func init() {
	items.EngineBase = func(e any) *items.Base { return e.(*Engine).b }
}
