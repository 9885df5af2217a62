package store

import (
	"context"
	"fmt"
)

// Lister is implemented by stores that list the items of one namespace in
// key order, a page at a time: what a session or chat-history service needs
// to enumerate what it stored without a query. Every store of this module
// implements it.
type Lister interface {
	// ListItems returns the live items whose namespace is exactly ns (not
	// the namespaces under it) and whose key is greater than opt.After, in
	// key order (byte order, which for UTF-8 is code point order), at most
	// opt.Limit of them. It never refreshes TTLs. To page, pass the last key
	// of a page as the next page's After; an empty page is the end.
	ListItems(ctx context.Context, ns Namespace, opt ListItemsOptions) ([]Item, error)
}

// ListItemsOptions narrow ListItems. The zero value lists the first
// DefaultListItemsLimit items.
type ListItemsOptions struct {
	// After lists keys greater than this one (exclusive cursor); "" starts
	// at the first key.
	After string
	// Limit caps the page; 0 means DefaultListItemsLimit, at most MaxLimit.
	Limit int
}

// DefaultListItemsLimit is ListItems' page size when Limit is 0.
const DefaultListItemsLimit = 100

// Validate checks the options: Limit between 0 and MaxLimit, and After a
// usable key when set.
func (o ListItemsOptions) Validate() error {
	if err := checkWindow(o.Limit, 0); err != nil {
		return err
	}
	if o.After != "" {
		if err := ValidateKey(o.After); err != nil {
			return fmt.Errorf("after: %w", err)
		}
	}
	return nil
}

// EffectiveLimit is Limit, or DefaultListItemsLimit when Limit is 0.
func (o ListItemsOptions) EffectiveLimit() int {
	if o.Limit == 0 {
		return DefaultListItemsLimit
	}
	return o.Limit
}

// PrefixDeleter is implemented by stores that delete a whole namespace
// subtree at once (a user's or a session's memories). Every store of this
// module implements it.
type PrefixDeleter interface {
	// DeletePrefix deletes every item (live or expired) whose namespace is
	// prefix or under it, with its vectors, all of them or (on error) none,
	// and returns how many it deleted. An item put under prefix while it
	// runs may survive, as if put just after. The prefix must be a valid,
	// non-empty namespace: deleting everything takes an explicit loop
	// over ListNamespaces.
	DeletePrefix(ctx context.Context, prefix Namespace) (int, error)
}
