package mongostore_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/memvault/memvault/backends/mongodb/mongostore"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/memstore"
)

// TestReviewS26DottedLabelOpensMovedValue (session 26 review): an item's
// value is sealed to the dotted namespace text (serde.AppendItemAAD), but
// this driver reads a namespace label holding '.' from the document's
// array (Python's layout joins labels with '/'). So the namespaces
// ["a","b"] and ["a.b"] have the same associated data: a sealed value
// copied by someone with write access from ("a/b", k) into a document
// ("a.b", ["a.b"], k) opens there and is returned by a search at the root
// as the item of another namespace, one memvault itself cannot even write.
// Want: the moved value refused (serde.ErrDecrypt, or ErrDocument for a
// label memvault's validation refuses), never opened.
func TestReviewS26DottedLabelOpensMovedValue(t *testing.T) {
	ctx := context.Background()
	db := mongotest.Database(t)
	s := newStore(t, db, mongostore.Options{Serde: encrypted(t)})
	if err := s.Put(ctx, store.Namespace{"a", "b"}, "k", map[string]any{"secret": "a/b's password"}); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("persistent-store")
	raw, err := coll.FindOne(ctx, bson.D{{Key: "namespace_str", Value: "a/b"}, {Key: "key", Value: "k"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	_, sealed := raw.Lookup("memvault_value").Binary()
	now := time.Now().UTC()
	if _, err := coll.InsertOne(ctx, bson.D{
		{Key: "namespace_str", Value: "a.b"}, {Key: "key", Value: "k"}, {Key: "namespace", Value: bson.A{"a.b"}},
		{Key: "memvault_value", Value: bson.Binary{Data: sealed}},
		{Key: "created_at", Value: now}, {Key: "updated_at", Value: now},
	}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Search(ctx, nil, store.SearchOptions{Limit: 10})
	t.Logf("root search: err=%v, %d items", err, len(res))
	if err != nil && !errors.Is(err, serde.ErrDecrypt) && !errors.Is(err, mongostore.ErrDocument) {
		t.Errorf("root search = %v, want serde.ErrDecrypt or mongostore.ErrDocument", err)
	}
	for _, r := range res {
		if len(r.Namespace) == 1 && r.Value["secret"] != nil {
			t.Errorf("root search opened the value sealed to [a b]/k moved into namespace %q: %v", r.Namespace, r.Value)
		}
	}
	nss, err := s.ListNamespaces(ctx, store.ListNamespacesOptions{})
	t.Logf("namespaces: %q, %v", nss, err)
}

// s26Values are values the shared jsonvaluetest cases do not hold: a
// negative zero, map keys MongoDB reads as operators or paths or refuses
// as field names, a key named like a document's own fields, NUL in a key,
// a deep nesting and a long key.
func s26Values() map[string]map[string]any {
	deep := map[string]any{"leaf": int64(1)}
	for range 120 {
		deep = map[string]any{"d": deep}
	}
	return map[string]map[string]any{
		"negzero":    {"z": math.Copysign(0, -1), "l": []any{math.Copysign(0, -1)}},
		"emptykey":   {"": "empty", "n": map[string]any{"": int64(1)}},
		"operators":  {"$where": "sleep(1000)", "$gt": map[string]any{"$ne": int64(1)}},
		"dotted":     {"a.b": int64(1), "n": map[string]any{"c.d": "x"}},
		"docfields":  {"_id": "mine", "namespace_str": "x", "memvault_value": []any{}},
		"nulkey":     {"k\x00v": "nul"},
		"deep":       deep,
		"longkey":    {strings.Repeat("k", 100_000): "v"},
		"bytes_like": {"b": "AAEC", "t": "2024-05-04T06:32:42.123456789Z"},
	}
}

// TestReviewS26HostileValuesLikeMemory (session 26 review): each of
// s26Values comes back from the MongoDB store — plaintext (BSON) and
// encrypted — with the same Go types and values as from the in-memory
// store (a float's sign included), and a search filter on an operator or
// dotted key matches as it does there.
func TestReviewS26HostileValuesLikeMemory(t *testing.T) {
	ctx := context.Background()
	mem, err := memstore.New(memstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"plaintext", "encrypted"} {
		t.Run(mode, func(t *testing.T) {
			var sd serde.Serializer
			if mode == "encrypted" {
				sd = encrypted(t)
			}
			s := newStore(t, mongotest.Database(t), mongostore.Options{Serde: sd})
			ns := store.Namespace{"v"}
			for name, v := range s26Values() {
				want, err := s26RoundTrip(ctx, mem, ns, name, v)
				if err != nil {
					t.Fatalf("memstore %s: %v", name, err)
				}
				got, err := s26RoundTrip(ctx, s, ns, name, v)
				if err != nil {
					t.Errorf("%s: mongostore = %.300v; memstore stored it", name, err)
					continue
				}
				if d := s26Diff(want, got); d != "" {
					t.Errorf("%s: mongostore returned another value than memstore: %s", name, d)
				}
			}
			for _, f := range []map[string]any{
				{"$where": "sleep(1000)"},
				{"$gt": map[string]any{"$ne": int64(1)}},
				{"a.b": int64(1)},
				{"_id": "mine"},
				{"": "empty"},
			} {
				want, werr := mem.Search(ctx, ns, store.SearchOptions{Filter: f, Limit: 50})
				got, gerr := s.Search(ctx, ns, store.SearchOptions{Filter: f, Limit: 50})
				if (werr == nil) != (gerr == nil) || len(want) != len(got) {
					t.Errorf("filter %v: memstore %d items (%v), mongostore %d (%v)", f, len(want), werr, len(got), gerr)
				}
			}
		})
	}
}

// s26RoundTrip puts v at ns/key in s and returns what Get reads back.
func s26RoundTrip(ctx context.Context, s store.Store, ns store.Namespace, key string, v map[string]any) (map[string]any, error) {
	if err := s.Put(ctx, ns, key, v); err != nil {
		return nil, err
	}
	it, err := s.Get(ctx, ns, key)
	if err != nil {
		return nil, err
	}
	if it == nil {
		return nil, errors.New("absent after put")
	}
	return it.Value, nil
}

// s26Diff describes the first difference of type, value or float sign
// between want and got ("" when none).
func s26Diff(want, got any) string {
	if fmt.Sprintf("%T", want) != fmt.Sprintf("%T", got) {
		return fmt.Sprintf("%T %.80v, want %T %.80v", got, got, want, want)
	}
	switch w := want.(type) {
	case map[string]any:
		g := got.(map[string]any)
		if len(w) != len(g) {
			return fmt.Sprintf("%d keys %.200q, want %d", len(g), slices.Sorted(maps.Keys(g)), len(w))
		}
		for k := range w {
			gv, ok := g[k]
			if !ok {
				return fmt.Sprintf("key %.40q missing", k)
			}
			if d := s26Diff(w[k], gv); d != "" {
				return fmt.Sprintf("[%.40q] %s", k, d)
			}
		}
	case []any:
		g := got.([]any)
		if len(w) != len(g) {
			return fmt.Sprintf("%d elements, want %d", len(g), len(w))
		}
		for i := range w {
			if d := s26Diff(w[i], g[i]); d != "" {
				return fmt.Sprintf("[%d] %s", i, d)
			}
		}
	case float64:
		if g := got.(float64); g != w || math.Signbit(g) != math.Signbit(w) {
			return fmt.Sprintf("%v (sign %v), want %v (sign %v)", g, math.Signbit(g), w, math.Signbit(w))
		}
	default:
		if !reflect.DeepEqual(want, got) {
			return fmt.Sprintf("%.80v, want %.80v", got, want)
		}
	}
	return ""
}

// TestReviewS26HugeLimits (session 26 review): searches and namespace
// listings with limits, offsets and depths of 1<<62 (and negative ones)
// answer as the in-memory store answers — the same items or the same
// kind of error.
func TestReviewS26HugeLimits(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, mongotest.Database(t), mongostore.Options{})
	mem, err := memstore.New(memstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []store.Store{s, mem} {
		for i := range 3 {
			if err := st.Put(ctx, store.Namespace{"a", fmt.Sprint(i)}, "k", map[string]any{"i": int64(i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	const huge = 1 << 62
	for _, o := range []store.SearchOptions{{Limit: huge}, {Offset: huge}, {Limit: huge, Offset: huge}, {Limit: -1}, {Offset: -1}, {Limit: math.MaxInt}, {Offset: math.MaxInt, Limit: math.MaxInt}, {Offset: 1 << 31}} {
		want, werr := mem.Search(ctx, store.Namespace{"a"}, o)
		got, gerr := s.Search(ctx, store.Namespace{"a"}, o)
		if (werr == nil) != (gerr == nil) || len(want) != len(got) {
			t.Errorf("Search %+v: memory %d items (%v), mongodb %d (%.300v)", o, len(want), werr, len(got), gerr)
		}
	}
	for _, o := range []store.ListNamespacesOptions{{Limit: huge}, {Offset: huge}, {MaxDepth: huge}, {MaxDepth: -1}, {Limit: -1}, {Offset: math.MaxInt, Limit: math.MaxInt}, {Offset: 1 << 31}} {
		want, werr := mem.ListNamespaces(ctx, o)
		got, gerr := s.ListNamespaces(ctx, o)
		if (werr == nil) != (gerr == nil) || len(want) != len(got) {
			t.Errorf("ListNamespaces %+v: memory %v (%v), mongodb %v (%.300v)", o, want, werr, got, gerr)
		}
	}
}

// TestReviewS26PlantedPlaintextRefused (session 26 review; held): in an
// encrypted store, a plain "value" document planted by someone with
// write access — alone, or beside the sealed memvault_value as Python's
// $set would leave it — is refused (serde.ErrPlaintextRefused), never
// returned as the item's value.
func TestReviewS26PlantedPlaintextRefused(t *testing.T) {
	ctx := context.Background()
	db := mongotest.Database(t)
	s := newStore(t, db, mongostore.Options{Serde: encrypted(t)})
	ns := store.Namespace{"u"}
	if err := s.Put(ctx, ns, "beside", map[string]any{"v": "sealed"}); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("persistent-store")
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "namespace_str", Value: "u"}, {Key: "key", Value: "beside"}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "value", Value: bson.D{{Key: "v", Value: "planted"}}}}}}); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "namespace_str", Value: "u"}, {Key: "key", Value: "alone"},
		{Key: "namespace", Value: bson.A{"u"}}, {Key: "value", Value: bson.D{{Key: "v", Value: "planted"}}},
		{Key: "created_at", Value: now}, {Key: "updated_at", Value: now}}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"beside", "alone"} {
		it, err := s.Get(ctx, ns, k)
		if err == nil && it != nil && it.Value["v"] == "planted" {
			t.Errorf("%s: the encrypted store returned a planted plaintext value: %v", k, it.Value)
		} else if !errors.Is(err, serde.ErrPlaintextRefused) {
			t.Errorf("%s: Get = %v, %v; want serde.ErrPlaintextRefused", k, it, err)
		}
	}
	res, err := s.Search(ctx, ns, store.SearchOptions{})
	for _, r := range res {
		if r.Value["v"] == "planted" {
			t.Errorf("search returned a planted plaintext value at %s", r.Key)
		}
	}
	t.Logf("search: %d items, %v", len(res), err)
}
