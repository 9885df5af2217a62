package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/memvault/memvault/store"
)

func (r *runner) testCRUD(t *testing.T) {
	t.Run("PutGet", func(t *testing.T) {
		e := r.plain(t)
		v := map[string]any{"text": "hello", "n": 1, "f": 2.5, "ok": true, "none": nil,
			"list": []any{1, "two", []any{3}}, "obj": map[string]any{"a": map[string]any{"b": "c"}}}
		e.put(ns("users", "u1"), "k", v)
		it := e.mustGet(ns("users", "u1"), "k")
		equalValue(t, "value", it.Value, v)
		if !it.Namespace.Equal(ns("users", "u1")) || it.Key != "k" {
			t.Fatalf("item is at %v/%q", it.Namespace, it.Key)
		}
		sameTime(t, "CreatedAt", it.CreatedAt, Epoch)
		sameTime(t, "UpdatedAt", it.UpdatedAt, Epoch)
		if !it.ExpiresAt.IsZero() {
			t.Fatalf("ExpiresAt = %v without TTL", it.ExpiresAt)
		}
	})
	t.Run("GetMissingKey", func(t *testing.T) {
		e := r.plain(t)
		e.put(ns("a"), "k", map[string]any{})
		if it := e.get(ns("a"), "other"); it != nil {
			t.Fatalf("Get(missing) = %+v", it)
		}
	})
	t.Run("GetMissingNamespace", func(t *testing.T) {
		e := r.plain(t)
		e.put(ns("a"), "k", map[string]any{})
		if it := e.get(ns("b"), "k"); it != nil {
			t.Fatalf("Get(other ns) = %+v", it)
		}
		if it := e.get(ns("a", "b"), "k"); it != nil {
			t.Fatalf("Get(child ns) = %+v", it)
		}
	})
	t.Run("EmptyValue", func(t *testing.T) {
		e := r.plain(t)
		e.put(ns("a"), "k", map[string]any{})
		it := e.mustGet(ns("a"), "k")
		if len(it.Value) != 0 {
			t.Fatalf("value = %v", it.Value)
		}
	})
	t.Run("Delete", func(t *testing.T) {
		e := r.plain(t)
		e.put(ns("a"), "k", map[string]any{"x": 1})
		e.put(ns("a"), "k2", map[string]any{"x": 2})
		e.del(ns("a"), "k")
		if it := e.get(ns("a"), "k"); it != nil {
			t.Fatalf("deleted item still there: %+v", it)
		}
		e.mustGet(ns("a"), "k2")
		if got := e.search(ns("a"), store.SearchOptions{}); len(got) != 1 {
			t.Fatalf("search after delete = %v", ids(got))
		}
	})
	t.Run("DeleteMissing", func(t *testing.T) {
		e := r.plain(t)
		e.del(ns("nothing", "here"), "k")
	})
	t.Run("DeleteLastItemRemovesNamespace", func(t *testing.T) {
		e := r.plain(t)
		e.put(ns("a", "b"), "k", map[string]any{})
		e.put(ns("c"), "k", map[string]any{})
		e.del(ns("a", "b"), "k")
		equalStrings(t, "namespaces", nsStrings(e.list(store.ListNamespacesOptions{})), []string{"c"})
	})
	t.Run("Replace", func(t *testing.T) {
		e := r.plain(t)
		e.put(ns("a"), "k", map[string]any{"v": 1, "old": true})
		e.clock.Advance(time.Minute)
		e.put(ns("a"), "k", map[string]any{"v": 2})
		it := e.mustGet(ns("a"), "k")
		equalValue(t, "value", it.Value, map[string]any{"v": 2})
		sameTime(t, "CreatedAt", it.CreatedAt, Epoch)
		sameTime(t, "UpdatedAt", it.UpdatedAt, Epoch.Add(time.Minute))
	})
	t.Run("RePutAfterDeleteResetsCreatedAt", func(t *testing.T) {
		e := r.plain(t)
		e.put(ns("a"), "k", map[string]any{"v": 1})
		e.del(ns("a"), "k")
		e.clock.Advance(time.Hour)
		e.put(ns("a"), "k", map[string]any{"v": 2})
		sameTime(t, "CreatedAt", e.mustGet(ns("a"), "k").CreatedAt, Epoch.Add(time.Hour))
	})
	t.Run("SameKeyDifferentNamespaces", func(t *testing.T) {
		e := r.plain(t)
		e.put(ns("a"), "k", map[string]any{"v": "a"})
		e.put(ns("a", "b"), "k", map[string]any{"v": "ab"})
		e.put(ns("b"), "k", map[string]any{"v": "b"})
		equalValue(t, "a/k", e.mustGet(ns("a"), "k").Value, map[string]any{"v": "a"})
		equalValue(t, "a.b/k", e.mustGet(ns("a", "b"), "k").Value, map[string]any{"v": "ab"})
		equalValue(t, "b/k", e.mustGet(ns("b"), "k").Value, map[string]any{"v": "b"})
	})
	t.Run("InputNotAliased", func(t *testing.T) {
		e := r.plain(t)
		inner := map[string]any{"x": 1}
		list := []any{"a"}
		v := map[string]any{"inner": inner, "list": list, "top": "t"}
		e.put(ns("a"), "k", v)
		inner["x"] = 2
		list[0] = "changed"
		v["top"] = "changed"
		equalValue(t, "value", e.mustGet(ns("a"), "k").Value,
			map[string]any{"inner": map[string]any{"x": 1}, "list": []any{"a"}, "top": "t"})
	})
	t.Run("OutputNotAliased", func(t *testing.T) {
		e := r.plain(t)
		e.put(ns("a"), "k", map[string]any{"inner": map[string]any{"x": 1}, "list": []any{"a"}})
		it := e.mustGet(ns("a"), "k")
		it.Value["inner"].(map[string]any)["x"] = 99
		it.Value["list"].([]any)[0] = "changed"
		it.Value["new"] = true
		it.Namespace[0] = "zzz"
		res := e.search(ns("a"), store.SearchOptions{})
		res[0].Value["inner"].(map[string]any)["x"] = 98
		equalValue(t, "value", e.mustGet(ns("a"), "k").Value,
			map[string]any{"inner": map[string]any{"x": 1}, "list": []any{"a"}})
	})
	t.Run("KeysAreOpaque", func(t *testing.T) {
		e := r.plain(t)
		for _, k := range []string{"a.b", "a/b", " ", "%", "_", "*", "'; DROP TABLE store; --", "\\", "\t"} {
			e.put(ns("keys"), k, map[string]any{"k": k})
		}
		for _, k := range []string{"a.b", "a/b", " ", "%", "_", "*", "'; DROP TABLE store; --", "\\", "\t"} {
			equalValue(t, "value of "+k, e.mustGet(ns("keys"), k).Value, map[string]any{"k": k})
		}
		if it := e.get(ns("keys"), "a"); it != nil {
			t.Fatal("key \"a\" matched a.b")
		}
		if got := e.search(ns("keys"), store.SearchOptions{Limit: 100}); len(got) != 9 {
			t.Fatalf("search found %d items, want 9", len(got))
		}
	})
}

func (r *runner) testValidation(t *testing.T) {
	bad := []struct {
		name string
		ns   store.Namespace
	}{
		{"Nil", nil},
		{"Empty", store.Namespace{}},
		{"EmptyFirstLabel", ns("", "a")},
		{"EmptyMiddleLabel", ns("a", "", "b")},
		{"EmptyLastLabel", ns("a", "")},
		{"DottedLabel", ns("a.b")},
		{"DottedSecondLabel", ns("a", "b.c")},
		{"DotOnly", ns(".")},
		{"ReservedRoot", ns("langgraph")},
		{"ReservedRootWithChild", ns("langgraph", "x")},
	}
	e := r.plain(t)
	ctx := context.Background()
	for _, c := range bad {
		t.Run("Put"+c.name, func(t *testing.T) {
			wantErr(t, "Put", e.s.Put(ctx, c.ns, "k", map[string]any{}), store.ErrInvalidNamespace)
		})
		t.Run("Get"+c.name, func(t *testing.T) {
			_, err := e.s.Get(ctx, c.ns, "k")
			wantErr(t, "Get", err, store.ErrInvalidNamespace)
		})
		t.Run("Delete"+c.name, func(t *testing.T) {
			wantErr(t, "Delete", e.s.Delete(ctx, c.ns, "k"), store.ErrInvalidNamespace)
		})
	}
	t.Run("ReservedLabelNotAtRoot", func(t *testing.T) {
		e.put(ns("x", "langgraph"), "k", map[string]any{})
		e.put(ns("langgraphs"), "k", map[string]any{})
	})
	t.Run("PutEmptyKey", func(t *testing.T) {
		wantErr(t, "Put", e.s.Put(ctx, ns("a"), "", map[string]any{}), store.ErrInvalidKey)
	})
	t.Run("GetEmptyKey", func(t *testing.T) {
		_, err := e.s.Get(ctx, ns("a"), "")
		wantErr(t, "Get", err, store.ErrInvalidKey)
	})
	t.Run("DeleteEmptyKey", func(t *testing.T) {
		wantErr(t, "Delete", e.s.Delete(ctx, ns("a"), ""), store.ErrInvalidKey)
	})
	t.Run("PutNilValue", func(t *testing.T) {
		wantErr(t, "Put(nil)", e.s.Put(ctx, ns("a"), "k", nil), store.ErrInvalidArgument)
	})
	t.Run("PutUnencodableValue", func(t *testing.T) {
		err := e.s.Put(ctx, ns("a"), "k", map[string]any{"c": make(chan int)})
		wantErr(t, "Put(chan)", err, store.ErrInvalidArgument)
	})
	t.Run("PutNaN", func(t *testing.T) {
		err := e.s.Put(ctx, ns("a"), "nan", map[string]any{"f": nanValue()})
		wantErr(t, "Put(NaN)", err, store.ErrInvalidArgument)
	})
	for _, c := range []struct {
		name   string
		prefix store.Namespace
	}{{"EmptyLabel", ns("a", "")}, {"DottedLabel", ns("a.b")}} {
		t.Run("SearchPrefix"+c.name, func(t *testing.T) {
			_, err := e.s.Search(ctx, c.prefix, store.SearchOptions{})
			wantErr(t, "Search", err, store.ErrInvalidNamespace)
		})
		t.Run("ListPrefix"+c.name, func(t *testing.T) {
			_, err := e.s.ListNamespaces(ctx, store.ListNamespacesOptions{Prefix: c.prefix})
			wantErr(t, "ListNamespaces", err, store.ErrInvalidNamespace)
		})
		t.Run("ListSuffix"+c.name, func(t *testing.T) {
			_, err := e.s.ListNamespaces(ctx, store.ListNamespacesOptions{Suffix: c.prefix})
			wantErr(t, "ListNamespaces", err, store.ErrInvalidNamespace)
		})
	}
	for _, c := range []struct {
		name string
		opt  store.SearchOptions
	}{
		{"NegativeLimit", store.SearchOptions{Limit: -1}},
		{"NegativeOffset", store.SearchOptions{Offset: -1}},
	} {
		t.Run("Search"+c.name, func(t *testing.T) {
			_, err := e.s.Search(ctx, nil, c.opt)
			wantErr(t, "Search", err, store.ErrInvalidArgument)
		})
	}
	for _, c := range []struct {
		name string
		opt  store.ListNamespacesOptions
	}{
		{"NegativeLimit", store.ListNamespacesOptions{Limit: -1}},
		{"NegativeOffset", store.ListNamespacesOptions{Offset: -5}},
		{"NegativeMaxDepth", store.ListNamespacesOptions{MaxDepth: -1}},
	} {
		t.Run("List"+c.name, func(t *testing.T) {
			_, err := e.s.ListNamespaces(ctx, c.opt)
			wantErr(t, "ListNamespaces", err, store.ErrInvalidArgument)
		})
	}
	t.Run("NothingWrittenByBadPuts", func(t *testing.T) {
		got, err := e.s.ListNamespaces(ctx, store.ListNamespacesOptions{})
		if err != nil {
			t.Fatal(err)
		}
		equalStrings(t, "namespaces", nsStrings(got), []string{"langgraphs", "x.langgraph"})
	})
	t.Run("TTLWithoutConfig", func(t *testing.T) {
		err := e.s.Put(ctx, ns("a"), "k", map[string]any{}, store.WithTTL(time.Minute))
		wantErr(t, "Put(WithTTL)", err, store.ErrNoTTL)
	})
	t.Run("ZeroTTLWithoutConfig", func(t *testing.T) {
		if err := e.s.Put(ctx, ns("a"), "zero", map[string]any{}, store.WithTTL(0)); err != nil {
			t.Fatalf("Put(WithTTL(0)): %v", err)
		}
	})
	t.Run("IndexWithoutConfig", func(t *testing.T) {
		err := e.s.Put(ctx, ns("a"), "k", map[string]any{"a": "x"}, store.WithIndex("a"))
		wantErr(t, "Put(WithIndex)", err, store.ErrNoIndex)
	})
	t.Run("WithoutIndexWithoutConfig", func(t *testing.T) {
		if err := e.s.Put(ctx, ns("a"), "noindex", map[string]any{}, store.WithoutIndex()); err != nil {
			t.Fatalf("Put(WithoutIndex): %v", err)
		}
	})
	t.Run("CanceledContext", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := e.s.Put(cctx, ns("a"), "k", map[string]any{}); !errors.Is(err, context.Canceled) {
			t.Fatalf("Put(canceled) = %v", err)
		}
		if _, err := e.s.Get(cctx, ns("a"), "k"); !errors.Is(err, context.Canceled) {
			t.Fatalf("Get(canceled) = %v", err)
		}
	})
}
