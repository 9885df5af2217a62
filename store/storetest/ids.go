package storetest

import (
	mrand "math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

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
	t.Run("too_long", r.testTooLong)
	t.Run("at_the_limit", r.testAtLimit)
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

// longID returns n bytes of valid UTF-8 that do not compress (seeded by
// seed): a mix of one- to four-byte characters drawn at random, none of
// them a namespace separator or field path syntax, so that a backend
// storing it in an index (PostgreSQL compresses a long index entry when it
// can) meets its worst case, and a byte count that differs from the
// character count.
func longID(seed uint64, n int) string {
	r := mrand.New(mrand.NewPCG(seed, uint64(n)))
	ranges := [][2]rune{{'a', 'z'}, {'A', 'Z'}, {0xC0, 0x24F}, {0x4E00, 0x9FFF}, {0x1F300, 0x1F64F}}
	var b strings.Builder
	for b.Len() < n {
		rg := ranges[r.IntN(len(ranges))]
		c := rg[0] + rune(r.IntN(int(rg[1]-rg[0]+1)))
		if b.Len()+utf8.RuneLen(c) > n {
			c = rune('a' + r.IntN(26))
		}
		b.WriteRune(c)
	}
	return b.String()
}

// limitNS returns a namespace of three labels whose stored form (labels
// joined with '.') is exactly n bytes.
func limitNS(seed uint64, n int) store.Namespace {
	a := (n - 2) / 3
	return ns(longID(seed, a), longID(seed+1, a), longID(seed+2, n-2-2*a))
}

// testTooLong: a namespace (whole, or one label), key or index field path
// one byte longer than store.MaxIDBytes — counted in bytes: each ends in a
// multi-byte character — is refused by every write (Put, PutIf, a Batch's
// put op, WithIndex) with store.ErrIDTooLong (and the sentinel of its
// kind) before any I/O, and nothing is stored. Reads, listings, searches
// and deletes (Get, Search, ListNamespaces, ListItems, Delete,
// DeletePrefix, a Batch's get op and delete op) take it and find nothing,
// as for any absent item: the limit bounds what is stored, and a longer
// id an earlier version stored stays reachable (see the SQLite store's
// legacy-ids test).
func (r *runner) testTooLong(t *testing.T) {
	const n = store.MaxIDBytes
	e := r.indexed(t, store.Cosine, "text")
	e.put(ns("good"), "k", map[string]any{"text": "apple"})
	longLabel := ns("users", longID(1, n-1)+"é")          // one label over
	longWhole := ns(longID(2, n/2), longID(3, n/2-2)+"é") // each label under, the whole one over
	longKey := longID(4, n-1) + "é"                       // 513 bytes
	longPath := longID(5, n-1) + "é"                      // 513 bytes
	for _, x := range []string{longLabel[1], longWhole.String(), longKey, longPath} {
		if len(x) != n+1 {
			t.Fatalf("test setup: %d bytes, want %d", len(x), n+1)
		}
	}
	tooLong := func(what string, err, kind error) {
		t.Helper()
		wantErr(t, what, err, store.ErrIDTooLong)
		wantErr(t, what, err, kind)
	}
	ok := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v, want nil (only writes bound the length)", what, err)
		}
	}
	v := map[string]any{"text": "banana"}
	for name, bad := range map[string]store.Namespace{"label": longLabel, "namespace": longWhole} {
		tooLong("Put("+name+")", e.s.Put(e.ctx, bad, "k", v), store.ErrInvalidNamespace)
		_, err := e.s.Batch(e.ctx, []store.Op{
			store.PutOp{Namespace: ns("batch"), Key: "ok", Value: v},
			store.PutOp{Namespace: bad, Key: "k", Value: v},
		})
		tooLong("Batch(put "+name+")", err, store.ErrInvalidNamespace)
		if c, ok := e.s.(store.ConditionalPutter); ok {
			tooLong("PutIf("+name+")", c.PutIf(e.ctx, bad, "k", v, store.PutCondition{}), store.ErrInvalidNamespace)
		}

		it, err := e.s.Get(e.ctx, bad, "k")
		ok("Get("+name+")", err)
		if it != nil {
			t.Fatalf("Get(%s) found an item", name)
		}
		ok("Delete("+name+")", e.s.Delete(e.ctx, bad, "k"))
		res, err := e.s.Batch(e.ctx, []store.Op{
			store.GetOp{Namespace: bad, Key: "k"},
			store.PutOp{Namespace: bad, Key: "k"}, // a delete
			store.SearchOp{Prefix: bad},
			store.ListNamespacesOp{Options: store.ListNamespacesOptions{Prefix: bad}},
		})
		ok("Batch(get, delete, search, list "+name+")", err)
		if len(res) != 4 || res[0].Item != nil || len(res[2].Items) != 0 || len(res[3].Namespaces) != 0 {
			t.Fatalf("Batch(get, delete, search, list %s) found something: %v", name, res)
		}
		for _, opt := range []store.SearchOptions{{}, {Query: "apple"}} {
			found, err := e.s.Search(e.ctx, bad, opt)
			ok("Search("+name+")", err)
			if len(found) != 0 {
				t.Fatalf("Search(%s, %q) found %d items", name, opt.Query, len(found))
			}
		}
		for what, opt := range map[string]store.ListNamespacesOptions{"prefix": {Prefix: bad}, "suffix": {Suffix: bad}} {
			found, err := e.s.ListNamespaces(e.ctx, opt)
			ok("ListNamespaces("+what+" "+name+")", err)
			if len(found) != 0 {
				t.Fatalf("ListNamespaces(%s %s) found %v", what, name, found)
			}
		}
		if l, isLister := e.s.(store.Lister); isLister {
			found, err := l.ListItems(e.ctx, bad, store.ListItemsOptions{})
			ok("ListItems("+name+")", err)
			if len(found) != 0 {
				t.Fatalf("ListItems(%s) found %d items", name, len(found))
			}
		}
		if d, isDeleter := e.s.(store.PrefixDeleter); isDeleter {
			k, err := d.DeletePrefix(e.ctx, bad)
			ok("DeletePrefix("+name+")", err)
			if k != 0 {
				t.Fatalf("DeletePrefix(%s) deleted %d items", name, k)
			}
		}
	}
	tooLong("Put(key)", e.s.Put(e.ctx, ns("users"), longKey, v), store.ErrInvalidKey)
	_, err := e.s.Batch(e.ctx, []store.Op{store.PutOp{Namespace: ns("good"), Key: longKey, Value: v}})
	tooLong("Batch(put key)", err, store.ErrInvalidKey)
	if c, isCond := e.s.(store.ConditionalPutter); isCond {
		tooLong("PutIf(key)", c.PutIf(e.ctx, ns("users"), longKey, v, store.PutCondition{}), store.ErrInvalidKey)
	}
	tooLong("Put(WithIndex path)", e.s.Put(e.ctx, ns("users"), "k", map[string]any{longPath: "apple"}, store.WithIndex(longPath)), store.ErrInvalidPath)

	it, err := e.s.Get(e.ctx, ns("good"), longKey)
	ok("Get(key)", err)
	if it != nil {
		t.Fatalf("Get(long key) found an item")
	}
	ok("Delete(key)", e.s.Delete(e.ctx, ns("good"), longKey))
	res, err := e.s.Batch(e.ctx, []store.Op{store.GetOp{Namespace: ns("good"), Key: longKey}})
	ok("Batch(get key)", err)
	if len(res) != 1 || res[0].Item != nil {
		t.Fatalf("Batch(get long key) found %v", res)
	}
	if l, isLister := e.s.(store.Lister); isLister {
		found, err := l.ListItems(e.ctx, ns("good"), store.ListItemsOptions{After: longKey})
		ok("ListItems(after)", err)
		want := "" // the keys after the long one, in byte order
		if "k" > longKey {
			want = "k"
		}
		if got := keysOf(found); got != want {
			t.Fatalf("ListItems(after the long key) = %q, want %q", got, want)
		}
	}

	got := e.search(nil, store.SearchOptions{Limit: 100})
	sameSet(t, "items after the refused writes and the lookups", keys(got), []string{"k"})
	equalStrings(t, "namespaces after the refused writes and the lookups", nsStrings(e.list(store.ListNamespacesOptions{})), []string{"good"})
}

// testAtLimit writes an item whose namespace, key and index field path are
// each exactly store.MaxIDBytes bytes of incompressible multi-byte text —
// PostgreSQL's widest store index, store_vectors (prefix, key,
// field_name), holds the three in one btree entry — and reads it back by
// every entry point.
func (r *runner) testAtLimit(t *testing.T) {
	const n = store.MaxIDBytes
	path := longID(30, n)
	e := r.indexed(t, store.Cosine, path)
	nsp, key := limitNS(31, n), longID(34, n)
	if len(nsp.String()) != n || len(key) != n || len(path) != n {
		t.Fatalf("test setup: %d, %d, %d bytes, want %d", len(nsp.String()), len(key), len(path), n)
	}
	e.put(nsp, key, map[string]any{path: "apple", "n": 1})
	e.put(nsp, "short", map[string]any{path: "banana", "n": 2})
	it := e.mustGet(nsp, key)
	if it.Key != key || !it.Namespace.Equal(nsp) || it.Value[path] != "apple" {
		t.Fatalf("read back a %d-byte key (same: %v) in a %d-byte namespace (same: %v), the value's text %v", len(it.Key), it.Key == key, len(it.Namespace.String()), it.Namespace.Equal(nsp), it.Value[path])
	}
	got := e.search(nsp, store.SearchOptions{Query: "apple", Limit: 1})
	equalStrings(t, "vector search under the longest namespace", keys(got), []string{key})
	got = e.search(nsp[:1], store.SearchOptions{Limit: 10})
	sameSet(t, "search under its first label", keys(got), []string{key, "short"})
	equalStrings(t, "namespaces", nsStrings(e.list(store.ListNamespacesOptions{Prefix: nsp})), []string{nsp.String()})
	if l, ok := e.s.(store.Lister); ok {
		items, err := l.ListItems(e.ctx, nsp, store.ListItemsOptions{})
		if err != nil {
			t.Fatalf("ListItems(the longest namespace): %v", err)
		}
		sameSet(t, "ListItems of the longest namespace", strings.Split(keysOf(items), ","), []string{key, "short"})
		if _, err := l.ListItems(e.ctx, nsp, store.ListItemsOptions{After: key}); err != nil {
			t.Fatalf("ListItems(after the longest key): %v", err)
		}
	}
	e.del(nsp, key)
	if it := e.get(nsp, key); it != nil {
		t.Fatalf("the longest key survived Delete")
	}
	if d, ok := e.s.(store.PrefixDeleter); ok {
		if _, err := d.DeletePrefix(e.ctx, nsp); err != nil {
			t.Fatalf("DeletePrefix(the longest namespace): %v", err)
		}
	}
}
