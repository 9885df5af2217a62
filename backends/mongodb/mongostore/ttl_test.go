package mongostore_test

import (
	"context"
	"strings"
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

// TestTTLIndexRefused: asked for a TTL index, a store on FerretDB (which
// refuses expireAfterSeconds) opens without one, says so, writes no
// date copy of the expiry, and its sweeper still deletes expired items.
func TestTTLIndexRefused(t *testing.T) {
	ctx := context.Background()
	db := mongotest.Database(t)
	clock := storetest.NewClock()
	s := newStore(t, db, mongostore.Options{Now: clock.Now, TTLIndex: true,
		TTL: &store.TTLConfig{DefaultTTL: 10 * time.Minute, SweepInterval: -1}})
	st := s.TTLIndex()
	if !st.Requested || st.Present || !strings.Contains(st.Reason, "expireAfterSeconds") {
		t.Fatalf("TTLIndex() = %+v, want requested, absent, the server's refusal", st)
	}
	ns := store.Namespace{"ttl"}
	if err := s.Put(ctx, ns, "old", map[string]any{"text": "apple"}); err != nil {
		t.Fatal(err)
	}
	n, err := db.Collection("persistent-store").CountDocuments(ctx, bson.D{{Key: "memvault_expires_at", Value: bson.D{{Key: "$exists", Value: true}}}})
	if err != nil || n != 0 {
		t.Fatalf("%d documents with memvault_expires_at without the index (%v)", n, err)
	}
	clock.Advance(11 * time.Minute)
	if n, err := s.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v; want 1", n, err)
	}
	if st := newStore(t, db, mongostore.Options{}).TTLIndex(); st.Requested {
		t.Fatalf("a store without TTLIndex: %+v", st)
	}
}

// TestTTLIndexOrphans: where the server has the TTL index it deletes an
// expired item's document alone, leaving its vectors (another collection)
// and the code index's count of it; the next sweep deletes those vectors
// and logs the item gone, while a refreshed item keeps its vectors. The
// server's deletion is done here by hand (FerretDB has no TTL index).
func TestTTLIndexOrphans(t *testing.T) {
	ctx := context.Background()
	db := mongotest.Database(t)
	clock := storetest.NewClock()
	idx := &store.IndexConfig{Embedder: storetest.NewAxisEmbedder(storetest.Vocabulary...)}
	s := newStore(t, db, mongostore.Options{Now: clock.Now, Index: idx,
		TTL: &store.TTLConfig{DefaultTTL: 10 * time.Minute, SweepInterval: -1}})
	mongostore.AssumeTTLIndex(s)
	ns := store.Namespace{"ttl"}
	for _, k := range []string{"old", "kept"} {
		if err := s.Put(ctx, ns, k, map[string]any{"text": "apple"}); err != nil {
			t.Fatal(err)
		}
	}
	var doc struct {
		ExpiresAt time.Time `bson:"memvault_expires_at"`
	}
	if err := db.Collection("persistent-store").FindOne(ctx, bson.D{{Key: "key", Value: "old"}}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if want := clock.Now().Add(10 * time.Minute); !doc.ExpiresAt.Equal(want.Truncate(time.Millisecond)) {
		t.Fatalf("memvault_expires_at %v, want %v", doc.ExpiresAt, want)
	}
	clock.Advance(8 * time.Minute)
	if it, err := s.Get(ctx, ns, "kept"); err != nil || it == nil {
		t.Fatal(it, err) // refreshed to 18 minutes
	}
	clock.Advance(3 * time.Minute)
	// The server's TTL monitor deletes "old" (its document only).
	if _, err := db.Collection("persistent-store").DeleteOne(ctx, bson.D{{Key: "key", Value: "old"}}); err != nil {
		t.Fatal(err)
	}
	count := func(key string) int64 {
		n, err := db.Collection("persistent-store.vectors").CountDocuments(ctx, bson.D{{Key: "key", Value: key}})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if res, err := s.Search(ctx, ns, store.SearchOptions{Query: "apple", Limit: 10}); err != nil || len(res) != 1 || res[0].Key != "kept" {
		t.Fatalf("search before the sweep (the orphaned vectors still stored): %v, %v", res, err)
	}
	if _, err := s.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if count("old") != 0 {
		t.Fatal("the vectors of the item the server's TTL index deleted outlived the sweep")
	}
	if count("kept") == 0 {
		t.Fatal("the sweep deleted the vectors of the refreshed item")
	}
	res, err := s.Search(ctx, ns, store.SearchOptions{Query: "apple", Limit: 10})
	if err != nil || len(res) != 1 || res[0].Key != "kept" {
		t.Fatalf("search after the sweep: %v, %v", res, err)
	}
}
