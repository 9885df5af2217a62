package store

import (
	"fmt"
)

// MaxLimit is the largest limit or offset a search or a namespace listing
// accepts (2^31-1); a larger one is refused with ErrInvalidArgument. Within
// it, no backend allocates in proportion to the limit or the offset: memory
// grows with the results found, so a limit of MaxLimit over a small store
// is as cheap as its size. Bounding the numbers keeps offset+limit and the
// arithmetic built on it far from overflow on every platform Go runs on.
const MaxLimit = 1<<31 - 1

// checkWindow refuses a negative or too large limit or offset.
func checkWindow(limit, offset int) error {
	switch {
	case limit < 0:
		return fmt.Errorf("%w: negative limit %d", ErrInvalidArgument, limit)
	case offset < 0:
		return fmt.Errorf("%w: negative offset %d", ErrInvalidArgument, offset)
	case limit > MaxLimit:
		return fmt.Errorf("%w: limit %d above the maximum %d", ErrInvalidArgument, limit, MaxLimit)
	case offset > MaxLimit:
		return fmt.Errorf("%w: offset %d above the maximum %d", ErrInvalidArgument, offset, MaxLimit)
	}
	return nil
}

// Validate checks a search's limit and offset: each is between 0 and
// MaxLimit. (Every store also checks the filter before it runs a search.)
func (o SearchOptions) Validate() error {
	return checkWindow(o.Limit, o.Offset)
}

// EffectiveLimit is Limit, or DefaultSearchLimit when Limit is 0.
func (o SearchOptions) EffectiveLimit() int {
	if o.Limit == 0 {
		return DefaultSearchLimit
	}
	return o.Limit
}

// Validate checks list_namespaces options: prefix and suffix labels are
// valid (Namespace.ValidatePrefix), MaxDepth is not negative, and Limit and
// Offset are between 0 and MaxLimit.
func (o ListNamespacesOptions) Validate() error {
	if err := o.Prefix.ValidatePrefix(); err != nil {
		return fmt.Errorf("prefix: %w", err)
	}
	if err := o.Suffix.ValidatePrefix(); err != nil {
		return fmt.Errorf("suffix: %w", err)
	}
	if o.MaxDepth < 0 {
		return fmt.Errorf("%w: negative max depth %d", ErrInvalidArgument, o.MaxDepth)
	}
	return checkWindow(o.Limit, o.Offset)
}

// EffectiveLimit is Limit, or DefaultListNamespacesLimit when Limit is 0.
func (o ListNamespacesOptions) EffectiveLimit() int {
	if o.Limit == 0 {
		return DefaultListNamespacesLimit
	}
	return o.Limit
}

// Matches reports whether ns satisfies the prefix and suffix conditions,
// where a "*" label matches any one label.
func (o ListNamespacesOptions) Matches(ns Namespace) bool {
	return matchLabels(ns, o.Prefix, 0) && matchLabels(ns, o.Suffix, len(ns)-len(o.Suffix))
}

func matchLabels(ns, cond Namespace, at int) bool {
	if at < 0 || at+len(cond) > len(ns) {
		return false
	}
	for i, l := range cond {
		if l != "*" && ns[at+i] != l {
			return false
		}
	}
	return true
}

// Truncate returns ns cut to MaxDepth labels (all of it when MaxDepth is
// 0).
func (o ListNamespacesOptions) Truncate(ns Namespace) Namespace {
	if o.MaxDepth > 0 && len(ns) > o.MaxDepth {
		return ns[:o.MaxDepth]
	}
	return ns
}
