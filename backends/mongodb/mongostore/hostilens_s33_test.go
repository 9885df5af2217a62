package mongostore_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/memvault/memvault/backends/mongodb/mongostore"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/memstore"
)

// TestHostileLookupsAgreeWithMemory: lookups by a namespace or key a BSON
// string cannot carry (NUL, invalid UTF-8), or MongoDB reads as syntax
// (a regex character, a '$', a '.'), answer on MongoDB what the memory
// store answers: the same items, or an error on both.
func TestHostileLookupsAgreeWithMemory(t *testing.T) {
	ctx := context.Background()
	mg := newStore(t, mongotest.Database(t), mongostore.Options{})
	mem, err := memstore.New(memstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	for _, s := range []store.Store{mg, mem} {
		for _, ns := range []store.Namespace{{"a"}, {"a", "b"}, {"a\ufffd"}, {"ab"}, {"a.*"}} {
			if err := s.Put(ctx, ns, "k", map[string]any{"v": 1.0}); err != nil {
				t.Logf("put %q: %v", ns, err)
			}
		}
	}
	hostile := []string{"a\xff", "a\x00", "a\x00b", ".*", "a.*", "$where", "^a", "a|b", "\\", "a\\", "", "\xff"}
	type answer struct {
		got []string
		err bool
	}
	ask := func(s store.Store, what string, f func(s store.Store) ([]string, error)) answer {
		got, err := f(s)
		slices.Sort(got)
		return answer{got, err != nil}
	}
	for _, h := range hostile {
		for what, f := range map[string]func(s store.Store) ([]string, error){
			"get": func(s store.Store) ([]string, error) {
				it, err := s.Get(ctx, store.Namespace{h}, "k")
				if it != nil {
					return []string{it.Namespace.String()}, err
				}
				return nil, err
			},
			"get key": func(s store.Store) ([]string, error) {
				it, err := s.Get(ctx, store.Namespace{"a"}, h)
				if it != nil {
					return []string{it.Key}, err
				}
				return nil, err
			},
			"search": func(s store.Store) ([]string, error) {
				its, err := s.Search(ctx, store.Namespace{h}, store.SearchOptions{Limit: 10})
				var out []string
				for _, it := range its {
					out = append(out, fmt.Sprint(it.Namespace))
				}
				return out, err
			},
			"namespaces prefix": func(s store.Store) ([]string, error) {
				nss, err := s.ListNamespaces(ctx, store.ListNamespacesOptions{Prefix: store.Namespace{h}})
				var out []string
				for _, ns := range nss {
					out = append(out, fmt.Sprint(ns))
				}
				return out, err
			},
			"namespaces suffix": func(s store.Store) ([]string, error) {
				nss, err := s.ListNamespaces(ctx, store.ListNamespacesOptions{Suffix: store.Namespace{h}})
				var out []string
				for _, ns := range nss {
					out = append(out, fmt.Sprint(ns))
				}
				return out, err
			},
		} {
			want, got := ask(mem, what, f), ask(mg, what, f)
			if want.err != got.err || !slices.Equal(want.got, got.got) {
				t.Errorf("%s %q: MongoDB %v (error %v), memory %v (error %v)", what, h, got.got, got.err, want.got, want.err)
			}
		}
	}
}
