package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
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

// Update is a read-modify-write of one item that concurrent writers share:
// it reads the item (nil when absent), asks change for the new value, and
// writes it with PutIf on the version it read. On ErrConflict it starts
// again, after a short randomized backoff, until it succeeds or ctx ends,
// so every writer's change lands exactly once. change may run several
// times and must not keep state between runs; returning an error stops
// Update with that error, and a nil value writes nothing.
//
// s must be a ConditionalPutter (every store of this module is).
func Update(ctx context.Context, s Store, ns Namespace, key string, change func(cur *Item) (map[string]any, error), opts ...PutOption) error {
	cas, ok := s.(ConditionalPutter)
	if !ok {
		return fmt.Errorf("%w: store %T has no conditional put", ErrInvalidArgument, s)
	}
	backoff := time.Millisecond
	for {
		cur, err := s.Get(ctx, ns, key)
		if err != nil {
			return err
		}
		v, err := change(cur)
		if err != nil || v == nil {
			return err
		}
		var cond PutCondition
		if cur != nil {
			cond.UpdatedAt = cur.UpdatedAt
		}
		err = cas.PutIf(ctx, ns, key, v, cond, opts...)
		if !errors.Is(err, ErrConflict) {
			return err
		}
		// Jitter spreads the writers that just lost, so one of them wins the
		// next round instead of all of them colliding again.
		wait := backoff/2 + rand.N(backoff)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (gave up: %w)", ErrConflict, ctx.Err())
		case <-time.After(wait):
		}
		backoff = min(2*backoff, 50*time.Millisecond)
	}
}
