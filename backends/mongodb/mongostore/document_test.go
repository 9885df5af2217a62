package mongostore_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/memvault/memvault/backends/mongodb/mongostore"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/store"
)

// TestMovedCiphertextRefused: a sealed value copied by someone with write
// access to the collection into another item's document, together with its
// namespace array, does not open there: the document is found by
// (namespace_str, key), and an array that disagrees with it is refused
// (mongostore.ErrDocument). It opened as the other namespace's item.
func TestMovedCiphertextRefused(t *testing.T) {
	ctx := context.Background()
	db := mongotest.Database(t)
	s := newStore(t, db, mongostore.Options{Serde: encrypted(t)})
	victim, target := store.Namespace{"tenant-a", "secrets"}, store.Namespace{"tenant-b", "notes"}
	if err := s.Put(ctx, victim, "k", map[string]any{"secret": "tenant-a's password"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, target, "k", map[string]any{"note": "tenant-b's own note"}); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("persistent-store")
	raw, err := coll.FindOne(ctx, bson.D{{Key: "namespace_str", Value: "tenant-a/secrets"}, {Key: "key", Value: "k"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	_, sealed := raw.Lookup("memvault_value").Binary()
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "namespace_str", Value: "tenant-b/notes"}, {Key: "key", Value: "k"}},
		bson.D{{Key: "$set", Value: bson.D{
			{Key: "memvault_value", Value: bson.Binary{Data: sealed}},
			{Key: "namespace", Value: bson.A{"tenant-a", "secrets"}},
		}}}); err != nil {
		t.Fatal(err)
	}
	it, err := s.Get(ctx, target, "k")
	if err != nil && !errors.Is(err, mongostore.ErrDocument) {
		t.Errorf("Get of the tampered document = %v, want mongostore.ErrDocument", err)
	}
	if err == nil && it != nil {
		t.Fatalf("Get(%v, k) opened a value sealed to %v moved into its document: %v (namespace %v)", target, victim, it.Value, it.Namespace)
	}
	res, err := s.Search(ctx, store.Namespace{"tenant-b"}, store.SearchOptions{})
	if err == nil {
		for _, r := range res {
			if r.Value["secret"] != nil {
				t.Fatalf("Search(tenant-b) returned tenant-a's moved secret: %v (namespace %v)", r.Value, r.Namespace)
			}
		}
	}
}

// TestOversizedBatchStoresNothing: an item whose document would be over
// MongoDB's 16 MiB limit fails its batch with mongostore.ErrTooLarge before
// anything is written (FerretDB stored the 17 MiB document; MongoDB would
// refuse it after the batch's earlier puts were written).
func TestOversizedBatchStoresNothing(t *testing.T) {
	ctx := context.Background()
	db := mongotest.Database(t)
	s := newStore(t, db, mongostore.Options{})
	ns := store.Namespace{"big"}
	huge := strings.Repeat("x", 17<<20)
	_, err := s.Batch(ctx, []store.Op{
		store.PutOp{Namespace: ns, Key: "small", Value: map[string]any{"v": "fits"}},
		store.PutOp{Namespace: ns, Key: "huge", Value: map[string]any{"v": huge}},
	})
	if !errors.Is(err, mongostore.ErrTooLarge) {
		t.Fatalf("Batch with a 17 MiB value = %v, want mongostore.ErrTooLarge", err)
	}
	if it, gerr := s.Get(ctx, ns, "small"); gerr != nil || it != nil {
		t.Errorf("the batch failed (%.200v), yet its first put is stored: %v, %v", err, it, gerr)
	}
}
