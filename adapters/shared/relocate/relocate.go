package relocate

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/store"
)

// Place is an item's namespace and key.
type Place struct {
	Namespace store.Namespace
	Key       string
}

// Get returns the item at now, or the one at old when there is none at
// now (nil when neither exists): both read in one batch.
func Get(ctx context.Context, st store.Store, now, old Place) (*store.Item, error) {
	res, err := st.Batch(ctx, []store.Op{
		store.GetOp{Namespace: now.Namespace, Key: now.Key},
		store.GetOp{Namespace: old.Namespace, Key: old.Key},
	})
	if err != nil {
		return nil, err
	}
	if res[0].Item != nil {
		return res[0].Item, nil
	}
	return res[1].Item, nil
}

// Update is store.Update of the item at now, except that while there is
// none, change starts from the item at old; once the changed value is
// stored at now, the item at old is deleted. A writer of the old layout
// running meanwhile (a process not upgraded) may lose its write.
func Update(ctx context.Context, st store.Store, now, old Place, change func(cur *store.Item) (map[string]any, error), opts ...store.PutOption) error {
	moved := false
	err := store.Update(ctx, st, now.Namespace, now.Key, func(cur *store.Item) (map[string]any, error) {
		moved = false
		if cur == nil {
			was, err := st.Get(ctx, old.Namespace, old.Key)
			if err != nil {
				return nil, err
			}
			cur, moved = was, was != nil
		}
		return change(cur)
	}, opts...)
	if err != nil || !moved {
		return err
	}
	return st.Delete(ctx, old.Namespace, old.Key)
}

// Move moves every item of the namespaces matching old (a "*" label
// matches any one label; items of namespaces under them are not
// touched) to the place to names for its namespace and key, with opts,
// and deletes it; an item already at its new place, written since, is
// newer and is kept. It returns how many items it took out of the old
// places. st must be a store.Lister (every memvault store is).
func Move(ctx context.Context, st store.Store, old store.Namespace, to func(ns store.Namespace, key string) Place, opts ...store.PutOption) (int, error) {
	lister, ok := st.(store.Lister)
	if !ok {
		return 0, fmt.Errorf("store %T cannot list items", st)
	}
	nss, err := st.ListNamespaces(ctx, store.ListNamespacesOptions{Prefix: old, MaxDepth: len(old), Limit: store.MaxLimit})
	if err != nil {
		return 0, err
	}
	const page = 500
	n := 0
	for _, ns := range nss {
		if len(ns) != len(old) {
			continue
		}
		// Each page's items are deleted before the next is read, so
		// every page is the first one left.
		for {
			items, err := lister.ListItems(ctx, ns, store.ListItemsOptions{Limit: page})
			if err != nil {
				return n, err
			}
			for i := range items {
				it := &items[i]
				dst := to(ns, it.Key)
				err := store.Update(ctx, st, dst.Namespace, dst.Key, func(cur *store.Item) (map[string]any, error) {
					if cur != nil {
						return nil, nil
					}
					return it.Value, nil
				}, opts...)
				if err == nil {
					err = st.Delete(ctx, ns, it.Key)
				}
				if err != nil {
					return n, fmt.Errorf("move %s/%s: %w", ns, it.Key, err)
				}
				n++
			}
			if len(items) < page {
				break
			}
		}
	}
	return n, nil
}
