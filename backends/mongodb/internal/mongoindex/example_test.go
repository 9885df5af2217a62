package mongoindex_test

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/memvault/memvault/backends/mongodb/internal/mongoindex"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
)

// An index made by another program (Python's MongoDBSaver, JS, a person)
// serves the same queries whatever its name: Setup asks HasIndexOn before
// making its own. The fields and their directions must match, in order.
func ExampleHasIndexOn() {
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
	coll := client.Database("checkpointing_db").Collection("checkpoints")

	// Made by hand, under a name memvault would not give it.
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{
		Keys:    bson.D{{Key: "thread_id", Value: 1}, {Key: "checkpoint_ns", Value: 1}},
		Options: options.Index().SetName("by_hand"),
	}); err != nil {
		fmt.Println(err)
		return
	}
	for _, keys := range []bson.D{
		{{Key: "thread_id", Value: int32(1)}, {Key: "checkpoint_ns", Value: int32(1)}},
		{{Key: "checkpoint_ns", Value: 1}, {Key: "thread_id", Value: 1}},
		{{Key: "thread_id", Value: -1}, {Key: "checkpoint_ns", Value: 1}},
	} {
		has, err := mongoindex.HasIndexOn(ctx, coll, keys)
		fmt.Println(has, err)
	}
	// Output:
	// true <nil>
	// false <nil>
	// false <nil>
}
