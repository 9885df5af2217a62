package store

import (
	"context"
	"errors"
	"time"
)

// ErrConflict reports a conditional put (PutIf) that found the item changed
// since the caller read it, or present when it had to be absent. Nothing
// was written; read the item again and retry.
var ErrConflict = errors.New("store: conflict: the item changed since it was read")

// ConditionalPutter is implemented by stores that write an item only when
// it is as the caller last read it: compare-and-set, for read-modify-write
// cycles that concurrent writers share (a session's state, a counter).
// Every store of this module implements it, atomically.
type ConditionalPutter interface {
	// PutIf stores value at (ns, key) as Put does when the stored item
	// matches cond, and otherwise writes nothing and returns ErrConflict.
	// The check and the write are one atomic step. A nil value is
	// ErrInvalidArgument (conditional deletes are not offered).
	PutIf(ctx context.Context, ns Namespace, key string, value map[string]any, cond PutCondition, opts ...PutOption) error
}

// PutCondition is what PutIf compares with the stored item.
type PutCondition struct {
	// UpdatedAt is the item's UpdatedAt as last read (from Get, Search or
	// ListItems); every write of an item moves its UpdatedAt forward, so
	// it names one version. The zero time means the item must be absent
	// (an expired item counts as absent).
	UpdatedAt time.Time
}

// Holds reports whether cond matches an item that is live (present and not
// expired) with the given UpdatedAt. Backends call it, or do the same
// comparison in SQL.
func (c PutCondition) Holds(live bool, updatedAt time.Time) bool {
	if c.UpdatedAt.IsZero() {
		return !live
	}
	return live && updatedAt.Equal(c.UpdatedAt)
}
