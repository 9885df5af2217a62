package storetest

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/jsonvalue"
	"github.com/memvault/memvault/store"
)

// testListItems holds stores that implement store.Lister to its contract:
// exactly one namespace, key (byte) order, pages by an exclusive cursor,
// expired items left out, no TTL refresh, exact values.
func (r *runner) testListItems(t *testing.T) {
	lister := func(t *testing.T, e *env) store.Lister {
		l, ok := e.s.(store.Lister)
		if !ok {
			t.Skipf("%T does not implement store.Lister", e.s)
		}
		return l
	}
	keys := []string{"b", "a", "c", "é", "B", "aa", "a b", "z\u00e9", "0", "ü🔑"}
	t.Run("KeyOrderAndPaging", func(t *testing.T) {
		e := r.plain(t)
		l := lister(t, e)
		for i, k := range keys {
			e.put(ns("users", "u1"), k, map[string]any{"i": i})
		}
		// Neighbours that must not show: a child namespace, a sibling
		// sharing the text prefix, the parent.
		e.put(ns("users", "u1", "x"), "a", map[string]any{"child": true})
		e.put(ns("users", "u10"), "a", map[string]any{"sibling": true})
		e.put(ns("users"), "a", map[string]any{"parent": true})
		want := slices.Clone(keys)
		slices.Sort(want) // byte order
		for _, size := range []int{1, 3, len(keys), 0} {
			var got []string
			after := ""
			for pages := 0; ; pages++ {
				if pages > len(keys)+1 {
					t.Fatalf("limit %d: paging does not end", size)
				}
				page, err := l.ListItems(e.ctx, ns("users", "u1"), store.ListItemsOptions{After: after, Limit: size})
				if err != nil {
					t.Fatal(err)
				}
				if len(page) == 0 {
					break
				}
				if size > 0 && len(page) > size {
					t.Fatalf("limit %d: page of %d", size, len(page))
				}
				for _, it := range page {
					if !it.Namespace.Equal(ns("users", "u1")) {
						t.Fatalf("listed an item of %v", it.Namespace)
					}
					got = append(got, it.Key)
				}
				after = page[len(page)-1].Key
			}
			equalStrings(t, "keys", got, want)
		}
	})
	t.Run("ExactValues", func(t *testing.T) {
		e := r.plain(t)
		l := lister(t, e)
		v := map[string]any{"n": int64(math.MaxInt64), "f": 5.0, "s": "a\x00b", "l": []any{true, nil}}
		e.put(ns("v"), "k", v)
		page, err := l.ListItems(e.ctx, ns("v"), store.ListItemsOptions{})
		if err != nil || len(page) != 1 {
			t.Fatalf("ListItems = %v, %v", page, err)
		}
		if d := jsonvalue.Diff(v, page[0].Value); d != "" {
			t.Fatal(d)
		}
		got := e.mustGet(ns("v"), "k")
		if !page[0].CreatedAt.Equal(got.CreatedAt) || !page[0].UpdatedAt.Equal(got.UpdatedAt) {
			t.Fatalf("timestamps %v/%v, Get has %v/%v", page[0].CreatedAt, page[0].UpdatedAt, got.CreatedAt, got.UpdatedAt)
		}
		page[0].Value["n"] = "changed" // the caller owns what it got
		strictValue(t, "get after mutating a listed value", e.mustGet(ns("v"), "k").Value, v)
	})
	t.Run("ExpiredLeftOutNotRefreshed", func(t *testing.T) {
		e := r.withTTL(t, store.TTLConfig{}) // refresh on read is the default
		l := lister(t, e)
		e.put(ns("t"), "short", map[string]any{"x": 1}, store.WithTTL(time.Minute))
		e.put(ns("t"), "long", map[string]any{"x": 2}, store.WithTTL(time.Hour))
		before := e.get(ns("t"), "long", store.WithRefreshTTL(false)).ExpiresAt
		e.clock.Advance(2 * time.Minute)
		page, err := l.ListItems(e.ctx, ns("t"), store.ListItemsOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) != 1 || page[0].Key != "long" {
			t.Fatalf("listed %v, want only the live item", keysOf(page))
		}
		if after := e.get(ns("t"), "long", store.WithRefreshTTL(false)).ExpiresAt; !after.Equal(before) {
			t.Fatalf("ListItems refreshed the TTL: %v -> %v", before, after)
		}
	})
	t.Run("BadInput", func(t *testing.T) {
		e := r.plain(t)
		l := lister(t, e)
		for name, c := range map[string]struct {
			ns   store.Namespace
			opt  store.ListItemsOptions
			want error
		}{
			"empty namespace":  {nil, store.ListItemsOptions{}, store.ErrInvalidNamespace},
			"NUL label":        {ns("a\x00"), store.ListItemsOptions{}, store.ErrInvalidNamespace},
			"negative limit":   {ns("a"), store.ListItemsOptions{Limit: -1}, store.ErrInvalidArgument},
			"limit too large":  {ns("a"), store.ListItemsOptions{Limit: store.MaxLimit + 1}, store.ErrInvalidArgument},
			"bad UTF-8 cursor": {ns("a"), store.ListItemsOptions{After: "\xff"}, store.ErrInvalidKey},
		} {
			if _, err := l.ListItems(e.ctx, c.ns, c.opt); !errors.Is(err, c.want) {
				t.Errorf("%s: %v, want %v", name, err, c.want)
			}
		}
		if page, err := l.ListItems(e.ctx, ns("a"), store.ListItemsOptions{Limit: store.MaxLimit}); err != nil || len(page) != 0 {
			t.Fatalf("ListItems with MaxLimit on an empty store = %v, %v", page, err)
		}
	})
}

// testDeletePrefix holds stores that implement store.PrefixDeleter to its
// contract: the namespace and everything under it goes (expired items and
// vectors too), neighbours sharing a text prefix stay, an empty prefix is
// refused.
func (r *runner) testDeletePrefix(t *testing.T) {
	deleter := func(t *testing.T, e *env) store.PrefixDeleter {
		d, ok := e.s.(store.PrefixDeleter)
		if !ok {
			t.Skipf("%T does not implement store.PrefixDeleter", e.s)
		}
		return d
	}
	t.Run("SubtreeOnly", func(t *testing.T) {
		e := r.indexed(t, store.Cosine, "text")
		d := deleter(t, e)
		gone := []store.Namespace{ns("users", "u1"), ns("users", "u1", "chats"), ns("users", "u1", "chats", "c9")}
		kept := []store.Namespace{ns("users", "u10"), ns("users"), ns("users", "u0"), ns("other", "u1")}
		for _, n := range append(slices.Clone(gone), kept...) {
			e.put(n, "k1", map[string]any{"text": "apple"})
			e.put(n, "k2", map[string]any{"text": "banana"})
		}
		n, err := d.DeletePrefix(e.ctx, ns("users", "u1"))
		if err != nil {
			t.Fatal(err)
		}
		if n != 2*len(gone) {
			t.Fatalf("DeletePrefix = %d, want %d", n, 2*len(gone))
		}
		for _, g := range gone {
			if it := e.get(g, "k1"); it != nil {
				t.Fatalf("%v/k1 survived", g)
			}
		}
		for _, k := range kept {
			e.mustGet(k, "k1")
		}
		if got := e.search(ns("users", "u1"), store.SearchOptions{Query: "apple", Limit: 100}); len(got) != 0 {
			t.Fatalf("search under the deleted prefix found %v", ids(got))
		}
		got := e.search(ns("users"), store.SearchOptions{Query: "apple", Limit: 100})
		if len(got) != 2*3 {
			t.Fatalf("search of the kept items found %d, want 6 (%v)", len(got), ids(got))
		}
		if n, err := d.DeletePrefix(e.ctx, ns("users", "u1")); err != nil || n != 0 {
			t.Fatalf("second DeletePrefix = %d, %v; want 0", n, err)
		}
	})
	t.Run("ExpiredCounted", func(t *testing.T) {
		e := r.withTTL(t, store.TTLConfig{})
		d := deleter(t, e)
		e.put(ns("x", "y"), "live", map[string]any{"a": 1})
		e.put(ns("x", "y"), "old", map[string]any{"a": 1}, store.WithTTL(time.Minute))
		e.clock.Advance(time.Hour)
		if n, err := d.DeletePrefix(e.ctx, ns("x")); err != nil || n != 2 {
			t.Fatalf("DeletePrefix = %d, %v; want 2", n, err)
		}
	})
	t.Run("BadInput", func(t *testing.T) {
		e := r.plain(t)
		d := deleter(t, e)
		e.put(ns("a"), "k", map[string]any{"v": 1})
		for _, bad := range []store.Namespace{nil, {}, {""}, {"a\x00"}, {"a.b"}} {
			if _, err := d.DeletePrefix(e.ctx, bad); !errors.Is(err, store.ErrInvalidNamespace) {
				t.Errorf("DeletePrefix(%q) = %v, want ErrInvalidNamespace", bad, err)
			}
		}
		e.mustGet(ns("a"), "k")
	})
}

func keysOf(items []store.Item) string {
	k := make([]string, len(items))
	for i, it := range items {
		k[i] = it.Key
	}
	return strings.Join(k, ",")
}
