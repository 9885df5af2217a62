package mongosaver_test

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/memvault/memvault/backends/mongodb/mongosaver"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/checkpointer"
)

// Example stores a checkpoint in MongoDB (here an in-process FerretDB)
// and reads it back.
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

	saver, err := mongosaver.New(client.Database("checkpointing_db"), mongosaver.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := saver.Setup(ctx); err != nil {
		fmt.Println(err)
		return
	}
	cp := &checkpointer.Checkpoint{
		V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
		ChannelValues:   map[string]any{"messages": []any{"hello"}},
		ChannelVersions: map[string]string{"messages": saver.NextVersion("")},
	}
	if _, err := saver.Put(ctx, checkpointer.Config{ThreadID: "thread-1"}, cp,
		checkpointer.Metadata{"source": "input", "step": -1}, cp.ChannelVersions); err != nil {
		fmt.Println(err)
		return
	}
	latest, err := saver.GetTuple(ctx, checkpointer.Config{ThreadID: "thread-1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(latest.Checkpoint.ChannelValues["messages"], latest.Checkpoint.ChannelVersions["messages"], latest.Metadata["source"])
	// Output: [hello] 1 input
}
