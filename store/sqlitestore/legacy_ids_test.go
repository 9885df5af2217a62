package sqlitestore

import (
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memvault/memvault/store"
)

// TestLegacyLongIDs: a database an earlier version wrote, before
// store.MaxIDBytes, may hold items whose namespace or key is longer
// (SQLite had no limit). The limit bounds writes only, so such an item is
// still read (Get, Search, ListNamespaces, ListItems) and deleted (Delete,
// DeletePrefix — what an erasure runs), while a write to it is refused
// with ErrIDTooLong.
//
// The rows are planted as the earlier version stored them: items are
// written with short ids by this build (plaintext values, no index), the
// database closed, and their prefix and key columns rewritten by SQL, then
// the database is opened again.
func TestLegacyLongIDs(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "legacy.db")
	long := func(c string) string { return strings.Repeat(c, 2994) + "-ünï" } // 3000 bytes
	nsA := store.Namespace{"users", long("a")}                                // a long namespace
	nsB, keyB := store.Namespace{"users", "u1"}, long("k")                    // a long key
	nsC, keyC := store.Namespace{"users", long("c")}, long("q")               // both, for DeletePrefix
	if len(nsA[1]) != 3000 || len(keyB) != 3000 {
		t.Fatalf("test setup: %d, %d bytes", len(nsA[1]), len(keyB))
	}

	s := openStore(t, path, Options{})
	for _, k := range []string{"a", "b", "c"} {
		if err := s.Put(ctx, store.Namespace{"users", "short-" + k}, "k", map[string]any{"who": k}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Put(ctx, store.Namespace{"users", "kept"}, "k", map[string]any{"who": "kept"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for short, to := range map[string][2]string{
		"users.short-a": {nsA.String(), "k"},
		"users.short-b": {nsB.String(), keyB},
		"users.short-c": {nsC.String(), keyC},
	} {
		res, err := db.ExecContext(ctx, `UPDATE store SET prefix = ?, key = ? WHERE prefix = ? AND key = 'k'`, to[0], to[1], short)
		if err != nil {
			t.Fatalf("plant %s: %v", short, err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("plant %s: %d rows", short, n)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s = openStore(t, path, Options{})
	t.Cleanup(func() { _ = s.Close() })
	for _, c := range []struct {
		ns       store.Namespace
		key, who string
	}{{nsA, "k", "a"}, {nsB, keyB, "b"}, {nsC, keyC, "c"}} {
		it, err := s.Get(ctx, c.ns, c.key)
		if err != nil || it == nil || it.Value["who"] != c.who {
			t.Fatalf("Get(legacy item %s) = %v, %v", c.who, it, err)
		}
		if !it.Namespace.Equal(c.ns) || it.Key != c.key {
			t.Fatalf("Get(legacy item %s) gave a %d-byte namespace and a %d-byte key", c.who, len(it.Namespace.String()), len(it.Key))
		}
		found, err := s.Search(ctx, c.ns, store.SearchOptions{Filter: map[string]any{"who": c.who}})
		if err != nil || len(found) != 1 || found[0].Key != c.key {
			t.Fatalf("Search(legacy namespace of %s) = %d items, %v", c.who, len(found), err)
		}
		listed, err := s.ListItems(ctx, c.ns, store.ListItemsOptions{})
		if err != nil || len(listed) != 1 || listed[0].Key != c.key {
			t.Fatalf("ListItems(legacy namespace of %s) = %d items, %v", c.who, len(listed), err)
		}
		if err := s.Put(ctx, c.ns, c.key, map[string]any{"who": "again"}); !errors.Is(err, store.ErrIDTooLong) {
			t.Fatalf("Put(legacy item %s) = %v, want ErrIDTooLong", c.who, err)
		}
	}
	nss, err := s.ListNamespaces(ctx, store.ListNamespacesOptions{Prefix: store.Namespace{"users"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []store.Namespace{nsA, nsB, nsC} {
		if !slices.ContainsFunc(nss, want.Equal) {
			t.Fatalf("ListNamespaces(users) misses a legacy namespace of %d bytes", len(want.String()))
		}
	}
	found, err := s.Search(ctx, nsA, store.SearchOptions{})
	if err != nil || len(found) != 1 {
		t.Fatalf("Search(the long namespace) = %d items, %v", len(found), err)
	}

	if err := s.Delete(ctx, nsA, "k"); err != nil {
		t.Fatalf("Delete(legacy long namespace): %v", err)
	}
	if err := s.Delete(ctx, nsB, keyB); err != nil {
		t.Fatalf("Delete(legacy long key): %v", err)
	}
	if n, err := s.DeletePrefix(ctx, nsC); err != nil || n != 1 {
		t.Fatalf("DeletePrefix(legacy long namespace) = %d, %v; want 1", n, err)
	}
	all, err := s.Search(ctx, nil, store.SearchOptions{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[0].Value["who"] != "kept" {
		t.Fatalf("after deleting the legacy items %d remain, want only the kept one", len(all))
	}
}
