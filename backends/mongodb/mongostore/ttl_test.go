package mongostore_test

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/memvault/memvault/backends/mongodb/mongostore"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/storetest"
)

// TestSweepDeletesDocuments: a read refreshes an item's expiry in its
// document, and the sweeper (FerretDB has no TTL indexes) deletes an
// expired item's document and its vectors' documents, leaving the
// refreshed one.
func TestSweepDeletesDocuments(t *testing.T) {
	ctx := context.Background()
	db := mongotest.Database(t)
	clock := storetest.NewClock()
	s := newStore(t, db, mongostore.Options{Now: clock.Now,
		Index: &store.IndexConfig{Embedder: storetest.NewAxisEmbedder(storetest.Vocabulary...)},
		TTL:   &store.TTLConfig{DefaultTTL: 10 * time.Minute, SweepInterval: -1}})
	ns := store.Namespace{"ttl"}
	for _, k := range []string{"old", "kept"} {
		if err := s.Put(ctx, ns, k, map[string]any{"text": "apple"}); err != nil {
			t.Fatal(err)
		}
	}
	count := func(coll string, key string) int64 {
		n, err := db.Collection(coll).CountDocuments(ctx, bson.D{{Key: "key", Value: key}})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if count("persistent-store.vectors", "old") == 0 {
		t.Fatal("no vector documents written")
	}
	clock.Advance(8 * time.Minute)
	if it, err := s.Get(ctx, ns, "kept"); err != nil || it == nil {
		t.Fatal(it, err) // refreshes "kept" to 18 minutes
	}
	var doc struct {
		Expires int64 `bson:"memvault_expires"`
	}
	if err := db.Collection("persistent-store").FindOne(ctx, bson.D{{Key: "key", Value: "kept"}}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if want := clock.Now().Add(10 * time.Minute).UnixNano(); doc.Expires != want {
		t.Fatalf("refreshed expiry %d, want %d", doc.Expires, want)
	}
	clock.Advance(3 * time.Minute)
	n, err := s.Sweep(ctx)
	if err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v; want 1", n, err)
	}
	if count("persistent-store", "old") != 0 || count("persistent-store.vectors", "old") != 0 {
		t.Fatal("the expired item's documents outlived the sweep")
	}
	if count("persistent-store", "kept") != 1 || count("persistent-store.vectors", "kept") == 0 {
		t.Fatal("the sweep deleted the refreshed item")
	}
}
