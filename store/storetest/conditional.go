package storetest

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memvault/memvault/store"
)

// testPutIf holds stores that implement store.ConditionalPutter to its
// contract: create-if-absent, update-if-unchanged, every write moving
// UpdatedAt forward even when the clock does not, and exactly one winner
// among concurrent writers of one version.
func (r *runner) testPutIf(t *testing.T) {
	cas := func(t *testing.T, e *env) store.ConditionalPutter {
		c, ok := e.s.(store.ConditionalPutter)
		if !ok {
			t.Skipf("%T does not implement store.ConditionalPutter", e.s)
		}
		return c
	}
	t.Run("CreateIfAbsent", func(t *testing.T) {
		e := r.plain(t)
		c := cas(t, e)
		if err := c.PutIf(e.ctx, ns("s"), "k", map[string]any{"n": 1}, store.PutCondition{}); err != nil {
			t.Fatal(err)
		}
		if err := c.PutIf(e.ctx, ns("s"), "k", map[string]any{"n": 2}, store.PutCondition{}); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("second create: %v, want ErrConflict", err)
		}
		strictValue(t, "after a refused create", e.mustGet(ns("s"), "k").Value, map[string]any{"n": int64(1)})
	})
	t.Run("UpdateIfUnchanged", func(t *testing.T) {
		e := r.indexed(t, store.Cosine, "text")
		c := cas(t, e)
		e.put(ns("s"), "k", map[string]any{"text": "apple"})
		seen := e.mustGet(ns("s"), "k")
		// The clock does not move: the next write must still change
		// UpdatedAt, or a stale reader's PutIf would succeed.
		e.put(ns("s"), "k", map[string]any{"text": "banana"})
		now := e.mustGet(ns("s"), "k")
		if !now.UpdatedAt.After(seen.UpdatedAt) {
			t.Fatalf("a write at the same clock left UpdatedAt at %v (was %v)", now.UpdatedAt, seen.UpdatedAt)
		}
		if err := c.PutIf(e.ctx, ns("s"), "k", map[string]any{"text": "cherry"}, store.PutCondition{UpdatedAt: seen.UpdatedAt}); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("PutIf with a stale version: %v, want ErrConflict", err)
		}
		strictValue(t, "after a stale PutIf", e.mustGet(ns("s"), "k").Value, map[string]any{"text": "banana"})
		if err := c.PutIf(e.ctx, ns("s"), "k", map[string]any{"text": "cherry"}, store.PutCondition{UpdatedAt: now.UpdatedAt}); err != nil {
			t.Fatalf("PutIf with the current version: %v", err)
		}
		after := e.mustGet(ns("s"), "k")
		strictValue(t, "after PutIf", after.Value, map[string]any{"text": "cherry"})
		if !after.CreatedAt.Equal(seen.CreatedAt) || !after.UpdatedAt.After(now.UpdatedAt) {
			t.Fatalf("PutIf timestamps created %v updated %v (before: %v, %v)", after.CreatedAt, after.UpdatedAt, seen.CreatedAt, now.UpdatedAt)
		}
		// Its vectors were replaced with it.
		got := e.search(ns("s"), store.SearchOptions{Query: "cherry"})
		if len(got) != 1 || got[0].Score == nil || *got[0].Score < 0.99 {
			t.Fatalf("search after PutIf = %+v", got)
		}
		if err := c.PutIf(e.ctx, ns("s"), "missing", map[string]any{"text": "x"}, store.PutCondition{UpdatedAt: now.UpdatedAt}); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("PutIf of an absent item with a version: %v, want ErrConflict", err)
		}
		if it := e.get(ns("s"), "missing"); it != nil {
			t.Fatal("a refused PutIf created the item")
		}
	})
	t.Run("ExpiredCountsAsAbsent", func(t *testing.T) {
		e := r.withTTL(t, store.TTLConfig{})
		c := cas(t, e)
		e.put(ns("s"), "k", map[string]any{"n": 1}, store.WithTTL(time.Minute))
		old := e.get(ns("s"), "k", store.WithRefreshTTL(false))
		e.clock.Advance(time.Hour)
		if err := c.PutIf(e.ctx, ns("s"), "k", map[string]any{"n": 2}, store.PutCondition{UpdatedAt: old.UpdatedAt}); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("PutIf on an expired item's version: %v, want ErrConflict", err)
		}
		if err := c.PutIf(e.ctx, ns("s"), "k", map[string]any{"n": 3}, store.PutCondition{}); err != nil {
			t.Fatalf("create over an expired item: %v", err)
		}
		strictValue(t, "recreated", e.mustGet(ns("s"), "k").Value, map[string]any{"n": int64(3)})
	})
	t.Run("OneWinnerPerVersion", func(t *testing.T) {
		e := r.plain(t)
		c := cas(t, e)
		e.put(ns("s"), "counter", map[string]any{"n": 0})
		const writers, rounds = 4, 5
		var wins, conflicts atomic.Int64
		for range rounds {
			seen := e.mustGet(ns("s"), "counter")
			n := seen.Value["n"].(int64)
			var wg sync.WaitGroup
			for range writers {
				wg.Go(func() {
					err := c.PutIf(e.ctx, ns("s"), "counter", map[string]any{"n": n + 1}, store.PutCondition{UpdatedAt: seen.UpdatedAt})
					switch {
					case err == nil:
						wins.Add(1)
					case errors.Is(err, store.ErrConflict):
						conflicts.Add(1)
					default:
						t.Error(err)
					}
				})
			}
			wg.Wait()
		}
		if wins.Load() != rounds || conflicts.Load() != rounds*(writers-1) {
			t.Fatalf("%d wins and %d conflicts, want %d and %d", wins.Load(), conflicts.Load(), rounds, rounds*(writers-1))
		}
		strictValue(t, "counter", e.mustGet(ns("s"), "counter").Value, map[string]any{"n": int64(rounds)})
	})
	t.Run("BadInput", func(t *testing.T) {
		e := r.plain(t)
		c := cas(t, e)
		for name, err := range map[string]error{
			"nil value": c.PutIf(e.ctx, ns("s"), "k", nil, store.PutCondition{}),
			"empty ns":  c.PutIf(e.ctx, nil, "k", map[string]any{}, store.PutCondition{}),
			"empty key": c.PutIf(e.ctx, ns("s"), "", map[string]any{}, store.PutCondition{}),
		} {
			if err == nil || errors.Is(err, store.ErrConflict) {
				t.Errorf("%s: %v, want a validation error", name, err)
			}
		}
	})
}
