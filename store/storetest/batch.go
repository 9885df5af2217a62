package storetest

import (
	"fmt"
	"testing"

	"github.com/memvault/memvault/store"
)

func (r *runner) testBatch(t *testing.T) {
	t.Run("ResultsAligned", func(t *testing.T) {
		e := r.plain(t)
		e.put(ns("a"), "k1", map[string]any{"v": 1})
		res, err := e.s.Batch(e.ctx, []store.Op{
			store.GetOp{Namespace: ns("a"), Key: "k1"},
			store.PutOp{Namespace: ns("a"), Key: "k2", Value: map[string]any{"v": 2}},
			store.SearchOp{Prefix: ns("a")},
			store.ListNamespacesOp{},
			store.GetOp{Namespace: ns("a"), Key: "missing"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 5 {
			t.Fatalf("%d results for 5 ops", len(res))
		}
		if res[0].Item == nil || res[0].Item.Key != "k1" {
			t.Fatalf("result 0 = %+v", res[0])
		}
		if res[1].Item != nil || res[1].Items != nil || res[1].Namespaces != nil {
			t.Fatalf("put result = %+v", res[1])
		}
		equalStrings(t, "search result", keys(res[2].Items), []string{"k1"})
		equalStrings(t, "list result", nsStrings(res[3].Namespaces), []string{"a"})
		if res[4].Item != nil {
			t.Fatalf("missing get = %+v", res[4].Item)
		}
	})
	t.Run("ReadsSeeStateBeforePuts", func(t *testing.T) {
		e := r.plain(t)
		e.put(ns("a"), "old", map[string]any{"v": "before"})
		res, err := e.s.Batch(e.ctx, []store.Op{
			store.PutOp{Namespace: ns("a"), Key: "old", Value: map[string]any{"v": "after"}},
			store.PutOp{Namespace: ns("a"), Key: "new", Value: map[string]any{"v": "new"}},
			store.PutOp{Namespace: ns("b"), Key: "new", Value: map[string]any{}},
			store.GetOp{Namespace: ns("a"), Key: "old"},
			store.GetOp{Namespace: ns("a"), Key: "new"},
			store.SearchOp{Prefix: ns("a")},
			store.ListNamespacesOp{},
		})
		if err != nil {
			t.Fatal(err)
		}
		equalValue(t, "get old", res[3].Item.Value, map[string]any{"v": "before"})
		if res[4].Item != nil {
			t.Fatalf("get new saw the batch's own put: %+v", res[4].Item)
		}
		equalStrings(t, "search", keys(res[5].Items), []string{"old"})
		equalStrings(t, "list", nsStrings(res[6].Namespaces), []string{"a"})
		equalValue(t, "after batch", e.mustGet(ns("a"), "old").Value, map[string]any{"v": "after"})
		e.mustGet(ns("b"), "new")
	})
	t.Run("LastPutWins", func(t *testing.T) {
		e := r.plain(t)
		_, err := e.s.Batch(e.ctx, []store.Op{
			store.PutOp{Namespace: ns("a"), Key: "k", Value: map[string]any{"v": 1}},
			store.PutOp{Namespace: ns("a"), Key: "k", Value: map[string]any{"v": 2}},
			store.PutOp{Namespace: ns("a"), Key: "k", Value: map[string]any{"v": 3}},
		})
		if err != nil {
			t.Fatal(err)
		}
		equalValue(t, "value", e.mustGet(ns("a"), "k").Value, map[string]any{"v": 3})
	})
	t.Run("PutThenDelete", func(t *testing.T) {
		e := r.plain(t)
		e.put(ns("a"), "k", map[string]any{"v": 0})
		_, err := e.s.Batch(e.ctx, []store.Op{
			store.PutOp{Namespace: ns("a"), Key: "k", Value: map[string]any{"v": 1}},
			store.PutOp{Namespace: ns("a"), Key: "k"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if it := e.get(ns("a"), "k"); it != nil {
			t.Fatalf("item survived a later delete: %+v", it)
		}
	})
	t.Run("DeleteThenPut", func(t *testing.T) {
		e := r.plain(t)
		e.put(ns("a"), "k", map[string]any{"v": 0})
		_, err := e.s.Batch(e.ctx, []store.Op{
			store.PutOp{Namespace: ns("a"), Key: "k"},
			store.PutOp{Namespace: ns("a"), Key: "k", Value: map[string]any{"v": 1}},
		})
		if err != nil {
			t.Fatal(err)
		}
		equalValue(t, "value", e.mustGet(ns("a"), "k").Value, map[string]any{"v": 1})
	})
	t.Run("Empty", func(t *testing.T) {
		e := r.plain(t)
		res, err := e.s.Batch(e.ctx, nil)
		if err != nil || len(res) != 0 {
			t.Fatalf("Batch(nil) = %v, %v", res, err)
		}
	})
	t.Run("InvalidOpWritesNothing", func(t *testing.T) {
		e := r.plain(t)
		_, err := e.s.Batch(e.ctx, []store.Op{
			store.PutOp{Namespace: ns("a"), Key: "k", Value: map[string]any{}},
			store.PutOp{Namespace: ns("langgraph"), Key: "k", Value: map[string]any{}},
		})
		wantErr(t, "Batch", err, store.ErrInvalidNamespace)
		if it := e.get(ns("a"), "k"); it != nil {
			t.Fatal("a batch that failed validation wrote its valid puts")
		}
	})
	t.Run("InvalidSearchInBatch", func(t *testing.T) {
		e := r.plain(t)
		_, err := e.s.Batch(e.ctx, []store.Op{
			store.PutOp{Namespace: ns("a"), Key: "k", Value: map[string]any{}},
			store.SearchOp{Options: store.SearchOptions{Filter: map[string]any{"x": map[string]any{"$nope": 1}}}},
		})
		wantErr(t, "Batch", err, store.ErrInvalidFilter)
		if it := e.get(ns("a"), "k"); it != nil {
			t.Fatal("a batch that failed validation wrote its valid puts")
		}
	})
	t.Run("NilOp", func(t *testing.T) {
		e := r.plain(t)
		_, err := e.s.Batch(e.ctx, []store.Op{nil})
		wantErr(t, "Batch([nil])", err, store.ErrInvalidArgument)
	})
	t.Run("ManyGetsAligned", func(t *testing.T) {
		e := r.plain(t)
		var ops []store.Op
		for i := range 50 {
			if i%3 != 0 {
				e.put(ns("many"), fmt.Sprint(i), map[string]any{"i": i})
			}
			ops = append(ops, store.GetOp{Namespace: ns("many"), Key: fmt.Sprint(i)})
		}
		res, err := e.s.Batch(e.ctx, ops)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			switch {
			case i%3 == 0 && r.Item != nil:
				t.Fatalf("result %d = %+v, want nil", i, r.Item)
			case i%3 != 0 && (r.Item == nil || r.Item.Key != fmt.Sprint(i)):
				t.Fatalf("result %d = %+v, want key %d", i, r.Item, i)
			case i%3 != 0:
				equalValue(t, "value", r.Item.Value, map[string]any{"i": i})
			}
		}
	})
	t.Run("ManyPuts", func(t *testing.T) {
		e := r.plain(t)
		var ops []store.Op
		for i := range 100 {
			ops = append(ops, store.PutOp{Namespace: ns("bulk", fmt.Sprint(i%7)), Key: fmt.Sprint(i), Value: map[string]any{"i": i}})
		}
		if _, err := e.s.Batch(e.ctx, ops); err != nil {
			t.Fatal(err)
		}
		if got := e.search(nil, store.SearchOptions{Limit: 1000}); len(got) != 100 {
			t.Fatalf("found %d items, want 100", len(got))
		}
		if got := e.list(store.ListNamespacesOptions{}); len(got) != 7 {
			t.Fatalf("found %d namespaces, want 7", len(got))
		}
	})
}

func (r *runner) testFilters(t *testing.T) {
	e := r.plain(t)
	items := map[string]map[string]any{
		"k1": {"n": 1, "x": "a", "b": true, "z": nil, "l": []any{1, 2}, "o": map[string]any{"p": 1}},
		"k2": {"n": 2.5, "x": "b", "b": false, "l": []any{2}},
		"k3": {"n": 10, "x": "10", "o": map[string]any{"p": 2}},
		"k4": {"n": "9", "x": 9},
		"k5": {},
		"k6": {"n": 9.0},
		"k7": {"a": map[string]any{"b": 1}, "a.b": 2},
		"k8": {"big": int64(9007199254740993), "neg": -0.5},
	}
	for k, v := range items {
		e.put(ns("f"), k, v)
	}
	type fm = map[string]any
	cases := []struct {
		name   string
		filter map[string]any
		want   []string
	}{
		{"LiteralInt", fm{"n": 1}, []string{"k1"}},
		{"LiteralIntAsFloat", fm{"n": 1.0}, []string{"k1"}},
		{"LiteralFloatAsInt", fm{"n": 9}, []string{"k6"}},
		{"LiteralStringNotNumber", fm{"n": "9"}, []string{"k4"}},
		{"LiteralFloat", fm{"n": 2.5}, []string{"k2"}},
		{"LiteralString", fm{"x": "a"}, []string{"k1"}},
		{"LiteralNumberNotString", fm{"x": 10}, nil},
		{"LiteralTrue", fm{"b": true}, []string{"k1"}},
		{"LiteralFalse", fm{"b": false}, []string{"k2"}},
		{"BoolNotNumber", fm{"b": 1}, nil},
		{"NumberNotBool", fm{"n": true}, nil},
		{"LiteralNull", fm{"z": nil}, []string{"k1"}},
		{"LiteralNullNotMissing", fm{"missing": nil}, nil},
		{"LiteralList", fm{"l": []any{1, 2}}, []string{"k1"}},
		{"LiteralListOrder", fm{"l": []any{2, 1}}, nil},
		{"LiteralListPartial", fm{"l": []any{1}}, nil},
		{"EqList", fm{"l": fm{"$eq": []any{2}}}, []string{"k2"}},
		{"EqObject", fm{"o": fm{"$eq": fm{"p": 1}}}, []string{"k1"}},
		{"NeObject", fm{"o": fm{"$ne": fm{"p": 1}}}, []string{"k3"}},
		{"EqInt", fm{"n": fm{"$eq": 10}}, []string{"k3"}},
		{"EqFloatWholeNumber", fm{"n": fm{"$eq": 10.0}}, []string{"k3"}},
		{"EqString", fm{"n": fm{"$eq": "9"}}, []string{"k4"}},
		{"EqNull", fm{"z": fm{"$eq": nil}}, []string{"k1"}},
		{"NeNumber", fm{"n": fm{"$ne": 1}}, []string{"k2", "k3", "k4", "k6"}},
		{"NeNull", fm{"z": fm{"$ne": nil}}, nil},
		{"NeOnNull", fm{"z": fm{"$ne": 1}}, []string{"k1"}},
		{"NeBool", fm{"b": fm{"$ne": true}}, []string{"k2"}},
		{"NeMissingNeverMatches", fm{"missing": fm{"$ne": 1}}, nil},
		{"GtNumber", fm{"n": fm{"$gt": 2}}, []string{"k2", "k3", "k6"}},
		{"GtNumericNotText", fm{"n": fm{"$gt": 9}}, []string{"k3"}},
		{"GteNumber", fm{"n": fm{"$gte": 9}}, []string{"k3", "k6"}},
		{"LtNumber", fm{"n": fm{"$lt": 9}}, []string{"k1", "k2"}},
		{"LteFloat", fm{"n": fm{"$lte": 2.5}}, []string{"k1", "k2"}},
		{"LtFloatFraction", fm{"n": fm{"$lt": 2.4999}}, []string{"k1"}},
		{"GtNegative", fm{"neg": fm{"$gt": -1}}, []string{"k8"}},
		{"GtString", fm{"n": fm{"$gt": "1"}}, []string{"k4"}},
		{"GtStringBytewise", fm{"x": fm{"$gt": "a"}}, []string{"k2"}},
		{"LtString", fm{"x": fm{"$lt": "b"}}, []string{"k1", "k3"}},
		{"GtNumberSkipsStrings", fm{"x": fm{"$gt": 5}}, []string{"k4"}},
		{"GtOnBoolNeverMatches", fm{"b": fm{"$gt": 0}}, nil},
		{"GtOnNullNeverMatches", fm{"z": fm{"$gte": 0}}, nil},
		{"GtOnListNeverMatches", fm{"l": fm{"$gt": 0}}, nil},
		{"GtMissingNeverMatches", fm{"missing": fm{"$gt": 0}}, nil},
		{"Range", fm{"n": fm{"$gt": 1, "$lt": 10}}, []string{"k2", "k6"}},
		{"RangeInclusive", fm{"n": fm{"$gte": 1, "$lte": 10}}, []string{"k1", "k2", "k3", "k6"}},
		{"EmptyRange", fm{"n": fm{"$gt": 5, "$lt": 5}}, nil},
		{"TwoFields", fm{"n": 1, "x": "a"}, []string{"k1"}},
		{"TwoFieldsNoMatch", fm{"n": 1, "x": "b"}, nil},
		{"DottedKeyIsLiteral", fm{"a.b": 2}, []string{"k7"}},
		{"DottedKeyNotPath", fm{"a.b": 1}, nil},
		{"BigIntExact", fm{"big": fm{"$gt": int64(9007199254740992)}}, []string{"k8"}},
		{"BigIntEqual", fm{"big": int64(9007199254740993)}, []string{"k8"}},
		{"EmptyFilter", fm{}, []string{"k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := e.search(ns("f"), store.SearchOptions{Filter: c.filter, Limit: 100})
			sameSet(t, fmt.Sprintf("filter %v", c.filter), keys(got), c.want)
			for _, it := range got {
				equalValue(t, "value of "+it.Key, it.Value, items[it.Key])
			}
		})
	}
	bad := []struct {
		name   string
		filter map[string]any
	}{
		{"UnknownOperator", fm{"n": fm{"$foo": 1}}},
		{"InOperator", fm{"n": fm{"$in": []any{1}}}},
		{"GtBool", fm{"n": fm{"$gt": true}}},
		{"GtNull", fm{"n": fm{"$gt": nil}}},
		{"GtList", fm{"n": fm{"$lt": []any{1}}}},
		{"GtObject", fm{"n": fm{"$gte": fm{"$eq": 1}}}},
		{"PlainObject", fm{"o": fm{"p": 1}}},
		{"MixedObject", fm{"n": fm{"$eq": 1, "p": 2}}},
		{"EmptyObject", fm{"n": fm{}}},
		{"Unencodable", fm{"n": make(chan int)}},
	}
	for _, c := range bad {
		t.Run("Invalid"+c.name, func(t *testing.T) {
			_, err := e.s.Search(e.ctx, ns("f"), store.SearchOptions{Filter: c.filter})
			wantErr(t, "Search", err, store.ErrInvalidFilter)
		})
	}
	t.Run("FilterThenPaging", func(t *testing.T) {
		e := r.plain(t)
		for i := range 20 {
			e.put(ns("p"), fmt.Sprintf("k%02d", i), map[string]any{"even": i%2 == 0, "i": i})
			e.clock.Advance(1e9)
		}
		got := e.search(ns("p"), store.SearchOptions{Filter: map[string]any{"even": true}, Limit: 3, Offset: 2})
		equalStrings(t, "page", keys(got), []string{"k14", "k12", "k10"})
	})
}
