package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/memvault/memvault/store/internal/items"

	"github.com/memvault/memvault/store"
)

func (r *runner) testTTL(t *testing.T) {
	ttl := 10 * time.Minute
	t.Run("ExpiresAtReported", func(t *testing.T) {
		e := r.withTTL(t, store.TTLConfig{})
		e.put(ns("t"), "k", map[string]any{}, store.WithTTL(ttl))
		sameTime(t, "ExpiresAt", e.mustGet(ns("t"), "k", store.WithRefreshTTL(false)).ExpiresAt, Epoch.Add(ttl))
	})
	t.Run("NoTTLNoExpiry", func(t *testing.T) {
		e := r.withTTL(t, store.TTLConfig{})
		e.put(ns("t"), "k", map[string]any{})
		if exp := e.mustGet(ns("t"), "k").ExpiresAt; !exp.IsZero() {
			t.Fatalf("ExpiresAt = %v without TTL", exp)
		}
	})
	t.Run("DefaultTTL", func(t *testing.T) {
		e := r.withTTL(t, store.TTLConfig{DefaultTTL: 5 * time.Minute})
		e.put(ns("t"), "d", map[string]any{})
		e.put(ns("t"), "zero", map[string]any{}, store.WithTTL(0))
		e.put(ns("t"), "own", map[string]any{}, store.WithTTL(time.Hour))
		sameTime(t, "default", e.mustGet(ns("t"), "d", store.WithRefreshTTL(false)).ExpiresAt, Epoch.Add(5*time.Minute))
		if exp := e.mustGet(ns("t"), "zero").ExpiresAt; !exp.IsZero() {
			t.Fatalf("WithTTL(0) expires at %v", exp)
		}
		sameTime(t, "own", e.mustGet(ns("t"), "own", store.WithRefreshTTL(false)).ExpiresAt, Epoch.Add(time.Hour))
	})
	t.Run("RePutWithoutTTLClearsIt", func(t *testing.T) {
		e := r.withTTL(t, store.TTLConfig{})
		e.put(ns("t"), "k", map[string]any{"v": 1}, store.WithTTL(ttl))
		e.put(ns("t"), "k", map[string]any{"v": 2})
		e.clock.Advance(time.Hour)
		it := e.mustGet(ns("t"), "k")
		if !it.ExpiresAt.IsZero() {
			t.Fatalf("ExpiresAt = %v after a put without TTL", it.ExpiresAt)
		}
	})
	t.Run("NegativeTTL", func(t *testing.T) {
		e := r.withTTL(t, store.TTLConfig{})
		err := e.s.Put(e.ctx, ns("t"), "k", map[string]any{}, store.WithTTL(-time.Minute))
		wantErr(t, "Put", err, store.ErrInvalidArgument)
	})
	t.Run("OmitExpired", func(t *testing.T) {
		e := r.withTTL(t, store.TTLConfig{})
		e.put(ns("t"), "k", map[string]any{}, store.WithTTL(ttl))
		e.put(ns("t"), "keep", map[string]any{})
		e.put(ns("gone"), "k", map[string]any{}, store.WithTTL(ttl))
		e.clock.Advance(9 * time.Minute)
		e.mustGet(ns("t"), "k", store.WithRefreshTTL(false))
		e.clock.Advance(2 * time.Minute)
		if it := e.get(ns("t"), "k"); it != nil {
			t.Fatalf("expired item served: %+v", it)
		}
		equalStrings(t, "search", keys(e.search(nil, store.SearchOptions{})), []string{"keep"})
		equalStrings(t, "namespaces", nsStrings(e.list(store.ListNamespacesOptions{})), []string{"t"})
	})
	t.Run("OmitExpiredAtExpiryInstant", func(t *testing.T) {
		e := r.withTTL(t, store.TTLConfig{})
		e.put(ns("t"), "k", map[string]any{}, store.WithTTL(ttl))
		e.clock.Advance(ttl)
		if it := e.get(ns("t"), "k"); it != nil {
			t.Fatal("item served at its expiry instant")
		}
	})
	// An expired item is gone on every path before any sweep, whatever the
	// configuration (LangGraph serves it until swept unless omit_expired is
	// set): and reading it must not bring it back by refreshing its TTL.
	t.Run("ExpiredNeverServedBeforeSweep", func(t *testing.T) {
		for name, cfg := range map[string]store.TTLConfig{
			"default":    {},
			"no_refresh": {DisableRefreshOnRead: true},
		} {
			t.Run(name, func(t *testing.T) {
				e := r.withTTL(t, cfg)
				e.put(ns("t"), "k", map[string]any{"v": 1}, store.WithTTL(ttl))
				e.put(ns("t"), "keep", map[string]any{"v": 2})
				e.put(ns("gone"), "k", map[string]any{"v": 3}, store.WithTTL(ttl))
				e.clock.Advance(time.Hour)
				for _, refresh := range []bool{true, false} {
					if it := e.get(ns("t"), "k", store.WithRefreshTTL(refresh)); it != nil {
						t.Fatalf("Get (refresh %v) served an item expired an hour ago: %+v", refresh, it)
					}
				}
				equalStrings(t, "search", keys(e.search(nil, store.SearchOptions{})), []string{"keep"})
				equalStrings(t, "namespaces", nsStrings(e.list(store.ListNamespacesOptions{})), []string{"t"})
				res, err := e.s.Batch(e.ctx, []store.Op{store.GetOp{Namespace: ns("t"), Key: "k"}, store.SearchOp{Prefix: ns("gone")}})
				if err != nil {
					t.Fatal(err)
				}
				if res[0].Item != nil || len(res[1].Items) != 0 {
					t.Fatalf("Batch served expired items: get %+v, search %d items", res[0].Item, len(res[1].Items))
				}
				e.clock.Advance(-time.Hour + ttl/2) // back before expiry: the reads above did not delete or refresh
				if e.get(ns("t"), "k", store.WithRefreshTTL(false)) == nil {
					t.Fatal("the item is gone before its expiry")
				}
			})
		}
	})
	refreshers := []struct {
		name string
		read func(e *env)
	}{
		{"Get", func(e *env) { e.mustGet(ns("t"), "k") }},
		{"GetExplicit", func(e *env) { e.mustGet(ns("t"), "k", store.WithRefreshTTL(true)) }},
		{"Search", func(e *env) {
			if got := e.search(ns("t"), store.SearchOptions{}); len(got) != 1 {
				e.t.Fatalf("search found %d items", len(got))
			}
		}},
		{"BatchGetOp", func(e *env) {
			res, err := e.s.Batch(e.ctx, []store.Op{store.GetOp{Namespace: ns("t"), Key: "k"}})
			if err != nil || res[0].Item == nil {
				e.t.Fatalf("batch get = %v, %v", res, err)
			}
		}},
		{"BatchSearchOp", func(e *env) {
			res, err := e.s.Batch(e.ctx, []store.Op{store.SearchOp{Prefix: ns("t")}})
			if err != nil || len(res[0].Items) != 1 {
				e.t.Fatalf("batch search = %v, %v", res, err)
			}
		}},
	}
	for _, rf := range refreshers {
		t.Run("RefreshOn"+rf.name, func(t *testing.T) {
			e := r.withTTL(t, store.TTLConfig{})
			e.put(ns("t"), "k", map[string]any{}, store.WithTTL(ttl))
			e.clock.Advance(8 * time.Minute)
			rf.read(e)
			sameTime(t, "refreshed ExpiresAt", e.mustGet(ns("t"), "k", store.WithRefreshTTL(false)).ExpiresAt,
				Epoch.Add(18*time.Minute))
			e.clock.Advance(8 * time.Minute)
			e.mustGet(ns("t"), "k", store.WithRefreshTTL(false))
			e.clock.Advance(3 * time.Minute)
			if it := e.get(ns("t"), "k"); it != nil {
				t.Fatal("item outlived its refreshed TTL")
			}
		})
	}
	noRefresh := []struct {
		name string
		cfg  store.TTLConfig
		read func(e *env)
	}{
		{"GetFalse", store.TTLConfig{}, func(e *env) { e.mustGet(ns("t"), "k", store.WithRefreshTTL(false)) }},
		{"SearchFalse", store.TTLConfig{}, func(e *env) {
			e.search(ns("t"), store.SearchOptions{RefreshTTL: ptr(false)})
		}},
		{"BatchGetOpFalse", store.TTLConfig{}, func(e *env) {
			if _, err := e.s.Batch(e.ctx, []store.Op{store.GetOp{Namespace: ns("t"), Key: "k", RefreshTTL: ptr(false)}}); err != nil {
				e.t.Fatal(err)
			}
		}},
		{"ConfigDisabledGet", store.TTLConfig{DisableRefreshOnRead: true}, func(e *env) { e.mustGet(ns("t"), "k") }},
		{"ConfigDisabledSearch", store.TTLConfig{DisableRefreshOnRead: true}, func(e *env) {
			e.search(ns("t"), store.SearchOptions{})
		}},
	}
	for _, nr := range noRefresh {
		t.Run("NoRefresh"+nr.name, func(t *testing.T) {
			e := r.withTTL(t, nr.cfg)
			e.put(ns("t"), "k", map[string]any{}, store.WithTTL(ttl))
			e.clock.Advance(8 * time.Minute)
			nr.read(e)
			e.clock.Advance(3 * time.Minute)
			if it := e.get(ns("t"), "k", store.WithRefreshTTL(false)); it != nil {
				t.Fatal("a read that must not refresh extended the TTL")
			}
		})
	}
	t.Run("ConfigDisabledExplicitRefresh", func(t *testing.T) {
		e := r.withTTL(t, store.TTLConfig{DisableRefreshOnRead: true})
		e.put(ns("t"), "k", map[string]any{}, store.WithTTL(ttl))
		e.clock.Advance(8 * time.Minute)
		e.mustGet(ns("t"), "k", store.WithRefreshTTL(true))
		e.clock.Advance(3 * time.Minute)
		e.mustGet(ns("t"), "k")
	})
	t.Run("RefreshInWholeMinutes", func(t *testing.T) {
		e := r.withTTL(t, store.TTLConfig{})
		e.put(ns("t"), "k", map[string]any{}, store.WithTTL(90*time.Second))
		sameTime(t, "ExpiresAt", e.mustGet(ns("t"), "k", store.WithRefreshTTL(false)).ExpiresAt, Epoch.Add(90*time.Second))
		e.clock.Advance(time.Minute)
		e.mustGet(ns("t"), "k")
		want := Epoch.Add(time.Minute + items.RefreshTTL(items.TTLMinutes(90*time.Second)))
		sameTime(t, "refreshed ExpiresAt", e.mustGet(ns("t"), "k", store.WithRefreshTTL(false)).ExpiresAt, want)
	})
	t.Run("NoTTLNotRefreshed", func(t *testing.T) {
		e := r.withTTL(t, store.TTLConfig{})
		e.put(ns("t"), "k", map[string]any{})
		e.clock.Advance(time.Hour)
		if exp := e.mustGet(ns("t"), "k").ExpiresAt; !exp.IsZero() {
			t.Fatalf("a read gave an item without TTL an expiry: %v", exp)
		}
	})
	t.Run("Sweep", func(t *testing.T) {
		e := r.withTTL(t, store.TTLConfig{})
		sw, ok := e.s.(store.Sweeper)
		if !ok {
			t.Skip("store does not implement store.Sweeper")
		}
		e.put(ns("t"), "short", map[string]any{}, store.WithTTL(time.Minute))
		e.put(ns("t"), "long", map[string]any{}, store.WithTTL(time.Hour))
		e.put(ns("t"), "none", map[string]any{})
		e.clock.Advance(2 * time.Minute)
		n, err := sw.Sweep(e.ctx)
		if err != nil || n != 1 {
			t.Fatalf("Sweep = %d, %v; want 1, nil", n, err)
		}
		if it := e.get(ns("t"), "short"); it != nil {
			t.Fatal("swept item still served")
		}
		e.mustGet(ns("t"), "long")
		e.mustGet(ns("t"), "none")
	})
	t.Run("BackgroundSweeper", func(t *testing.T) {
		e := r.withTTL(t, store.TTLConfig{SweepInterval: 5 * time.Millisecond})
		e.put(ns("t"), "k", map[string]any{}, store.WithTTL(time.Minute))
		e.put(ns("t"), "keep", map[string]any{})
		e.clock.Advance(2 * time.Minute)
		// Generous upper bound: the test fails only if the sweeper never runs.
		ctx, cancel := context.WithTimeout(e.ctx, 60*time.Second)
		defer cancel()
		for e.get(ns("t"), "k", store.WithRefreshTTL(false)) != nil {
			select {
			case <-ctx.Done():
				t.Fatal("the sweeper never deleted the expired item")
			case <-time.After(5 * time.Millisecond):
			}
		}
		e.mustGet(ns("t"), "keep")
	})
	t.Run("OmitExpiredInVectorSearch", func(t *testing.T) {
		e := r.open(t, Config{
			Index: &store.IndexConfig{Embedder: NewAxisEmbedder(Vocabulary...), Fields: []string{"text"}},
			TTL:   &store.TTLConfig{SweepInterval: -1},
		})
		e.put(ns("v"), "short", map[string]any{"text": "apple"}, store.WithTTL(time.Minute))
		e.put(ns("v"), "long", map[string]any{"text": "apple banana"}, store.WithTTL(time.Hour))
		e.clock.Advance(2 * time.Minute)
		checkScores(t, e.search(ns("v"), store.SearchOptions{Query: "apple"}), scoreCase{"long": 1 / sqrt2})
	})
}
