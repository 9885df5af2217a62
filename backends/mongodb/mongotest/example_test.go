package mongotest_test

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/memvault/memvault/backends/mongodb/mongotest"
)

// A test package starts one server for its tests and gives each test a
// database of its own:
//
//	func TestMain(m *testing.M) { mongotest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		db := mongotest.Database(t) // dropped when the test ends
//		…
//	}
//
// Both need the testing package's types; an example or a program calls
// Start, as here, and stops the server itself.
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
	coll := client.Database("example").Collection("notes")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "n1"}, {Key: "text", Value: "hello"}}); err != nil {
		fmt.Println(err)
		return
	}
	var got struct {
		Text string `bson:"text"`
	}
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: "n1"}}).Decode(&got); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(got.Text)
	// Output: hello
}
