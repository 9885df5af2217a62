package storetest

import (
	"testing"

	"github.com/memvault/memvault/store"
)

// testIDs holds every entry point to the text rules of namespaces and
// keys: a NUL byte or invalid UTF-8 in a label or key is refused with
// store.ErrInvalidNamespace or store.ErrInvalidKey before any I/O, on every
// backend alike (PostgreSQL's text type cannot hold them, so an item one
// backend accepted could not move to another); valid non-ASCII text is
// stored and given back unchanged.
func (r *runner) testIDs(t *testing.T) {
	for name, bad := range map[string]string{"nul": "a\x00b", "invalid_utf8": "\xff\xfeab"} {
		t.Run(name, func(t *testing.T) {
			e := r.plain(t)
			e.put(ns("good"), "k", map[string]any{"v": 1})
			err := e.s.Put(e.ctx, ns("users", bad), "k", map[string]any{"v": 2})
			wantErr(t, "Put(namespace label)", err, store.ErrInvalidNamespace)
			err = e.s.Put(e.ctx, ns("users"), bad, map[string]any{"v": 2})
			wantErr(t, "Put(key)", err, store.ErrInvalidKey)
			_, err = e.s.Get(e.ctx, ns("good", bad), "k")
			wantErr(t, "Get(namespace label)", err, store.ErrInvalidNamespace)
			_, err = e.s.Get(e.ctx, ns("good"), "k"+bad)
			wantErr(t, "Get(key)", err, store.ErrInvalidKey)
			err = e.s.Delete(e.ctx, ns("good"), "k"+bad)
			wantErr(t, "Delete(key)", err, store.ErrInvalidKey)
			_, err = e.s.Search(e.ctx, ns(bad), store.SearchOptions{})
			wantErr(t, "Search(prefix)", err, store.ErrInvalidNamespace)
			_, err = e.s.ListNamespaces(e.ctx, store.ListNamespacesOptions{Prefix: ns(bad)})
			wantErr(t, "ListNamespaces(prefix)", err, store.ErrInvalidNamespace)
			_, err = e.s.Batch(e.ctx, []store.Op{
				store.PutOp{Namespace: ns("batch"), Key: "ok", Value: map[string]any{"v": 3}},
				store.PutOp{Namespace: ns("batch"), Key: bad, Value: map[string]any{"v": 4}},
			})
			wantErr(t, "Batch(put with a bad key)", err, store.ErrInvalidKey)
			got := e.search(nil, store.SearchOptions{Limit: 100})
			sameSet(t, "items after the refused calls", keys(got), []string{"k"})
		})
	}
	t.Run("non_ascii_round_trip", func(t *testing.T) {
		e := r.plain(t)
		label, key := "ünï-東京", "🙂-ключ"
		e.put(ns("users", label), key, map[string]any{"v": label})
		it := e.mustGet(ns("users", label), key)
		if it.Key != key || !it.Namespace.Equal(ns("users", label)) {
			t.Fatalf("read back %v/%q, want %v/%q", it.Namespace, it.Key, ns("users", label), key)
		}
		equalStrings(t, "search under the non-ASCII label", keys(e.search(ns("users", label), store.SearchOptions{})), []string{key})
		equalStrings(t, "namespaces", nsStrings(e.list(store.ListNamespacesOptions{Prefix: ns("users")})), []string{"users." + label})
	})
}
