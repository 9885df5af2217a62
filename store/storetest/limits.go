package storetest

import (
	"math"
	"strconv"
	"testing"

	"github.com/memvault/memvault/store"
)

// testLimits holds every backend to huge limits and offsets: a limit of
// store.MaxLimit returns what there is (no allocation may be sized by the
// caller's number: a backend that does dies here of out-of-memory), an
// offset beyond the items returns nothing, and numbers above MaxLimit are
// refused with ErrInvalidArgument rather than overflowing.
func (r *runner) testLimits(t *testing.T) {
	const n = 5
	fill := func(e *env) []string {
		var want []string
		for i := range n {
			k := "k" + strconv.Itoa(i)
			e.put(ns("lim", k), k, map[string]any{"text": Vocabulary[i%len(Vocabulary)], "i": i})
			want = append(want, k)
		}
		return want
	}
	cases := []struct {
		name string
		opt  store.SearchOptions
		want int
	}{
		{"max_limit", store.SearchOptions{Limit: store.MaxLimit}, n},
		{"max_limit_filter", store.SearchOptions{Limit: store.MaxLimit, Filter: map[string]any{"i": map[string]any{"$gte": 1}}}, n - 1},
		{"max_limit_offset_2", store.SearchOptions{Limit: store.MaxLimit, Offset: 2}, n - 2},
		{"max_offset", store.SearchOptions{Limit: 3, Offset: store.MaxLimit}, 0},
		{"max_limit_max_offset", store.SearchOptions{Limit: store.MaxLimit, Offset: store.MaxLimit}, 0},
		{"max_limit_query", store.SearchOptions{Limit: store.MaxLimit, Query: "apple"}, n},
		{"max_limit_query_filter", store.SearchOptions{Limit: store.MaxLimit, Query: "apple", Filter: map[string]any{"i": map[string]any{"$lt": 3}}}, 3},
		{"max_offset_query", store.SearchOptions{Limit: 1, Offset: store.MaxLimit, Query: "apple"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := r.indexed(t, store.Cosine, "text")
			fill(e)
			got := e.search(ns("lim"), tc.opt)
			if len(got) != tc.want {
				t.Fatalf("Search(%+v) = %d items %v, want %d", tc.opt, len(got), keys(got), tc.want)
			}
		})
	}
	t.Run("namespaces", func(t *testing.T) {
		e := r.plain(t)
		fill(e)
		if got := e.list(store.ListNamespacesOptions{Limit: store.MaxLimit}); len(got) != n {
			t.Fatalf("ListNamespaces(limit MaxLimit) = %v, want %d namespaces", nsStrings(got), n)
		}
		if got := e.list(store.ListNamespacesOptions{Limit: store.MaxLimit, Offset: store.MaxLimit}); len(got) != 0 {
			t.Fatalf("ListNamespaces(offset MaxLimit) = %v, want none", nsStrings(got))
		}
	})
	if math.MaxInt > store.MaxLimit {
		t.Run("above_max", func(t *testing.T) {
			e := r.indexed(t, store.Cosine, "text")
			fill(e)
			for _, opt := range []store.SearchOptions{
				{Limit: math.MaxInt}, {Offset: math.MaxInt}, {Limit: store.MaxLimit + 1, Query: "apple"},
			} {
				_, err := e.s.Search(e.ctx, ns("lim"), opt)
				wantErr(t, "Search above MaxLimit", err, store.ErrInvalidArgument)
			}
			_, err := e.s.ListNamespaces(e.ctx, store.ListNamespacesOptions{Limit: math.MaxInt})
			wantErr(t, "ListNamespaces above MaxLimit", err, store.ErrInvalidArgument)
			_, err = e.s.Batch(e.ctx, []store.Op{store.SearchOp{Prefix: ns("lim"), Options: store.SearchOptions{Limit: math.MaxInt}}})
			wantErr(t, "Batch search above MaxLimit", err, store.ErrInvalidArgument)
		})
	}
}
