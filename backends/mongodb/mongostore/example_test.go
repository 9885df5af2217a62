package mongostore_test

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/memvault/memvault/backends/mongodb/mongostore"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/store"
)

// Example keeps a user's memories in MongoDB (here a FerretDB started for
// the example), searches them by meaning, and shows the document Python's
// MongoDBStore reads.
func Example() {
	ctx := context.Background()
	srv, err := mongotest.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Stop()
	client, err := mongo.Connect(options.Client().ApplyURI(srv.URI))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = client.Disconnect(ctx) }()
	db := client.Database("checkpointing_db")

	st, err := mongostore.New(ctx, db, mongostore.Options{
		Index: &store.IndexConfig{Embedder: embeddings.NewUnkeyedHashing(256), Fields: []string{"text"}},
		TTL:   &store.TTLConfig{DefaultTTL: 30 * 24 * time.Hour},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()

	ns := store.Namespace{"users", "ann", "memories"}
	for key, text := range map[string]string{
		"m1": "Ann is allergic to peanuts",
		"m2": "Ann prefers aisle seats on flights",
		"m3": "Ann's daughter plays the violin",
	} {
		if err := st.Put(ctx, ns, key, map[string]any{"text": text, "kind": "fact"}); err != nil {
			fmt.Println(err)
			return
		}
	}
	res, err := st.Search(ctx, store.Namespace{"users", "ann"}, store.SearchOptions{
		Query: "which seat does she like on a plane", Limit: 1,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res[0].Key, res[0].Value["text"])

	var doc struct {
		NS    string         `bson:"namespace_str"`
		Value map[string]any `bson:"value"`
	}
	if err := db.Collection("persistent-store").FindOne(ctx, bson.D{{Key: "key", Value: "m1"}}).Decode(&doc); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(doc.NS, doc.Value["text"])
	// Output:
	// m2 Ann prefers aisle seats on flights
	// users/ann/memories Ann is allergic to peanuts
}
