package items

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/store"
)

// Front gives a store the single-op methods of store.Store — Get, Put,
// Delete, Search and ListNamespaces — as one-op batches of its Batch, so
// that they behave exactly as the batch does on every driver. A driver
// embeds it and sets it up with its Batch method.
type Front struct {
	driver string
	batch  func(ctx context.Context, ops []store.Op) ([]store.Result, error)
}

// NewFront returns the Front of a driver's Batch; driver prefixes errors.
func NewFront(driver string, batch func(ctx context.Context, ops []store.Op) ([]store.Result, error)) *Front {
	return &Front{driver: driver, batch: batch}
}

// Get returns the item at (ns, key), or nil when there is none (see
// store.Store).
func (f *Front) Get(ctx context.Context, ns store.Namespace, key string, opts ...store.GetOption) (*store.Item, error) {
	o := ResolveGet(opts)
	res, err := f.batch(ctx, []store.Op{store.GetOp{Namespace: ns, Key: key, RefreshTTL: o.RefreshTTL}})
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
	_, err := f.batch(ctx, []store.Op{store.PutOp{Namespace: ns, Key: key, Value: value, Options: ResolvePut(opts)}})
	return err
}

// Delete removes the item at (ns, key), if any.
func (f *Front) Delete(ctx context.Context, ns store.Namespace, key string) error {
	_, err := f.batch(ctx, []store.Op{store.PutOp{Namespace: ns, Key: key}})
	return err
}

// Search lists the items under prefix (see store.Store).
func (f *Front) Search(ctx context.Context, prefix store.Namespace, opt store.SearchOptions) ([]store.SearchItem, error) {
	res, err := f.batch(ctx, []store.Op{store.SearchOp{Prefix: prefix, Options: opt}})
	if err != nil {
		return nil, err
	}
	return res[0].Items, nil
}

// ListNamespaces lists the namespaces holding items (see store.Store).
func (f *Front) ListNamespaces(ctx context.Context, opt store.ListNamespacesOptions) ([]store.Namespace, error) {
	res, err := f.batch(ctx, []store.Op{store.ListNamespacesOp{Options: opt}})
	if err != nil {
		return nil, err
	}
	return res[0].Namespaces, nil
}
