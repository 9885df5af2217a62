package mongostore_test

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/memvault/memvault/backends/mongodb/mongostore"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/jsonvalue"
	"github.com/memvault/memvault/store"
)

// TestPythonLayout checks the document memvault writes field by field
// against what Python's MongoDBStore (langgraph-store-mongodb 0.4) reads:
// namespace_str joined with "/", key, the namespace array, value as a
// BSON document, created_at and updated_at as dates; and that an
// encrypted store leaves no "value" for Python to misread.
func TestPythonLayout(t *testing.T) {
	ctx := context.Background()
	db := mongotest.Database(t)
	s := newStore(t, db, mongostore.Options{})
	ns := store.Namespace{"users", "ann", "prefs"}
	if err := s.Put(ctx, ns, "k", map[string]any{"color": "blue", "n": int64(7), "f": 1.5, "tags": []any{"a", true}}); err != nil {
		t.Fatal(err)
	}
	raw, err := db.Collection("persistent-store").FindOne(ctx, bson.D{{Key: "namespace_str", Value: "users/ann/prefs"}, {Key: "key", Value: "k"}}).Raw()
	if err != nil {
		t.Fatalf("no document at Python's (namespace_str, key): %v", err)
	}
	for field, typ := range map[string]bson.Type{"namespace": bson.TypeArray, "value": bson.TypeEmbeddedDocument,
		"created_at": bson.TypeDateTime, "updated_at": bson.TypeDateTime} {
		if v, err := raw.LookupErr(field); err != nil || v.Type != typ {
			t.Errorf("field %s: %v (%v), want %v", field, v.Type, err, typ)
		}
	}
	if v := raw.Lookup("value", "n"); v.Type != bson.TypeInt64 || v.Int64() != 7 {
		t.Errorf("value.n = %v, want int64 7", v)
	}
	if v := raw.Lookup("value", "color"); v.StringValue() != "blue" {
		t.Errorf("value.color = %v", v)
	}
	if _, err := raw.LookupErr("memvault_value"); err == nil {
		t.Error("a plain value also stored as memvault_value")
	}
	idx, err := db.Collection("persistent-store").Indexes().ListSpecifications(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ix := range idx {
		if ix.Name == "namespace_str_1_key_1" && ix.Unique != nil && *ix.Unique {
			found = true
		}
	}
	if !found {
		t.Errorf("no unique index namespace_str_1_key_1: %v", idx)
	}

	enc := newStore(t, db, mongostore.Options{Collection: "sealed", Serde: encrypted(t)})
	if err := enc.Put(ctx, ns, "k", map[string]any{"secret": "peanuts"}); err != nil {
		t.Fatal(err)
	}
	raw, err = db.Collection("sealed").FindOne(ctx, bson.D{{Key: "key", Value: "k"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.LookupErr("value"); err == nil {
		t.Error("an encrypted item has a value field Python would read")
	}
	if v, err := raw.LookupErr("memvault_value"); err != nil || v.Type != bson.TypeBinary {
		t.Errorf("memvault_value: %v, %v", v.Type, err)
	}
}

// TestReadsPythonDocuments: items Python's MongoDBStore wrote (ObjectId
// _id, int32 numbers, no memvault fields) read, search and list in
// memvault; a Python $set over an item memvault wrote (value, updated_at)
// is what memvault then reads.
func TestReadsPythonDocuments(t *testing.T) {
	ctx := context.Background()
	db := mongotest.Database(t)
	s := newStore(t, db, mongostore.Options{})
	coll := db.Collection("persistent-store")
	at := time.Date(2026, 3, 4, 5, 6, 7, 8_000_000, time.UTC)
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "namespace_str", Value: "py/notes"}, {Key: "key", Value: "p1"},
		{Key: "namespace", Value: bson.A{"py", "notes"}}, {Key: "created_at", Value: at},
		{Key: "value", Value: bson.D{{Key: "text", Value: "from python"}, {Key: "n", Value: int32(3)}}},
		{Key: "updated_at", Value: at}}); err != nil {
		t.Fatal(err)
	}
	it, err := s.Get(ctx, store.Namespace{"py", "notes"}, "p1")
	if err != nil || it == nil {
		t.Fatalf("Get of a Python item: %v, %v", it, err)
	}
	if d := jsonvalue.Diff(map[string]any{"text": "from python", "n": int64(3)}, it.Value); d != "" {
		t.Fatal(d)
	}
	if !it.UpdatedAt.Equal(at) || !it.CreatedAt.Equal(at) {
		t.Errorf("times %v %v, want %v", it.CreatedAt, it.UpdatedAt, at)
	}
	res, err := s.Search(ctx, store.Namespace{"py"}, store.SearchOptions{Filter: map[string]any{"text": "from python"}})
	if err != nil || len(res) != 1 {
		t.Fatalf("search: %v, %v", res, err)
	}
	nss, err := s.ListNamespaces(ctx, store.ListNamespacesOptions{})
	if err != nil || len(nss) != 1 || nss[0].String() != "py.notes" {
		t.Fatalf("namespaces: %v, %v", nss, err)
	}

	// memvault writes, then Python's put ($set value and updated_at).
	ns := store.Namespace{"mv"}
	if err := s.Put(ctx, ns, "k", map[string]any{"v": "memvault"}); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour).Truncate(time.Millisecond).UTC()
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "namespace_str", Value: "mv"}, {Key: "key", Value: "k"}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "value", Value: bson.D{{Key: "v", Value: "python"}}}, {Key: "updated_at", Value: later}}}}); err != nil {
		t.Fatal(err)
	}
	it, err = s.Get(ctx, ns, "k")
	if err != nil || it == nil {
		t.Fatal(it, err)
	}
	if it.Value["v"] != "python" || !it.UpdatedAt.Equal(later) {
		t.Fatalf("after Python's put memvault reads %v at %v, want python at %v", it.Value, it.UpdatedAt, later)
	}
}
