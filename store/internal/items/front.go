package items

import (
	"context"
	"fmt"
	"time"

	"github.com/memvault/memvault/store"
)

// Front is the store core's side of a store's public methods: Get, Put,
// Delete, Search and ListNamespaces as one-op batches of the driver's
// Batch, so that they behave exactly as the batch does; ListItems and
// DeletePrefix with their checks, around the driver's storage operation. A
// driver embeds it (a driver's own method of the same name takes
// precedence, for a fused fast path).
type Front struct {
	driver string
	b      *Base
	h      Hooks
}

// Hooks are the storage operations a driver lends its Front. Errors they
// return are final (prefixed with the driver's name).
type Hooks struct {
	// Batch is the driver's store.Store Batch.
	Batch func(ctx context.Context, ops []store.Op) ([]store.Result, error)
	// ListItems reads one checked page: the live items stored under the
	// namespace prefix (as stored), keys greater than after in byte
	// order, at most limit, as of now; it never refreshes TTLs.
	ListItems func(ctx context.Context, prefix, after string, limit int, now time.Time) ([]store.Item, error)
	// DeletePrefix deletes every item (live or not) whose namespace is the
	// checked prefix or under it, with its vectors, atomically, and
	// returns how many it deleted.
	DeletePrefix func(ctx context.Context, prefix store.Namespace) (int, error)
}

// NewFront returns the Front of a driver's storage operations.
func NewFront(b *Base, h Hooks) *Front {
	return &Front{driver: b.Driver, b: b, h: h}
}

// ListItems implements store.Lister (see there).
func (f *Front) ListItems(ctx context.Context, ns store.Namespace, opt store.ListItemsOptions) ([]store.Item, error) {
	prefix, limit, now, err := f.b.StartListItems(ctx, ns, opt)
	if err != nil {
		return nil, err
	}
	return f.h.ListItems(ctx, prefix, opt.After, limit, now)
}

// DeletePrefix implements store.PrefixDeleter (see there).
func (f *Front) DeletePrefix(ctx context.Context, prefix store.Namespace) (int, error) {
	if err := f.b.StartDeletePrefix(ctx, prefix); err != nil {
		return 0, err
	}
	return f.h.DeletePrefix(ctx, prefix)
}

// Get returns the item at (ns, key), or nil when there is none (see
// store.Store).
func (f *Front) Get(ctx context.Context, ns store.Namespace, key string, opts ...store.GetOption) (*store.Item, error) {
	o := ResolveGet(opts)
	res, err := f.h.Batch(ctx, []store.Op{store.GetOp{Namespace: ns, Key: key, RefreshTTL: o.RefreshTTL}})
	if err != nil {
		return nil, err
	}
	return res[0].Item, nil
}

// Put stores value at (ns, key). A nil value is an error (use Delete).
func (f *Front) Put(ctx context.Context, ns store.Namespace, key string, value map[string]any, opts ...store.PutOption) error {
	if value == nil {
		return fmt.Errorf("%s: %w: nil value (use Delete)", f.driver, store.ErrInvalidArgument)
	}
	_, err := f.h.Batch(ctx, []store.Op{store.PutOp{Namespace: ns, Key: key, Value: value, Options: ResolvePut(opts)}})
	return err
}

// Delete removes the item at (ns, key), if any.
func (f *Front) Delete(ctx context.Context, ns store.Namespace, key string) error {
	_, err := f.h.Batch(ctx, []store.Op{store.PutOp{Namespace: ns, Key: key}})
	return err
}

// Search lists the items under prefix (see store.Store).
func (f *Front) Search(ctx context.Context, prefix store.Namespace, opt store.SearchOptions) ([]store.SearchItem, error) {
	res, err := f.h.Batch(ctx, []store.Op{store.SearchOp{Prefix: prefix, Options: opt}})
	if err != nil {
		return nil, err
	}
	return res[0].Items, nil
}

// ListNamespaces lists the namespaces holding items (see store.Store).
func (f *Front) ListNamespaces(ctx context.Context, opt store.ListNamespacesOptions) ([]store.Namespace, error) {
	res, err := f.h.Batch(ctx, []store.Op{store.ListNamespacesOp{Options: opt}})
	if err != nil {
		return nil, err
	}
	return res[0].Namespaces, nil
}

// Complete is every interface of package store that each memvault store
// implements; drivers assert it at compile time.
type Complete interface {
	store.Store
	store.Sweeper
	store.ConditionalPutter
	store.Lister
	store.PrefixDeleter
}

// Rotatable is Complete with key rotation and re-embedding, which the SQL
// stores offer.
type Rotatable interface {
	Complete
	store.Reencrypter
	store.Reembedder
}
