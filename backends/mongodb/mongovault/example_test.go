package mongovault_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/backends/mongodb/mongovault"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/vault"
)

// Importing mongovault registers the mongodb:// scheme, so a MongoDB URI
// in MEMVAULT_DSN opens the MongoDB checkpointer and store through
// vault.Open, encrypted with LANGGRAPH_AES_KEY as on SQLite and
// PostgreSQL. The server here is a FerretDB that mongotest starts.
func Example() {
	ctx := context.Background()
	srv, err := mongotest.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Stop()

	// What FromEnv would read from MEMVAULT_DSN and LANGGRAPH_AES_KEY.
	cfg, err := config.FromLookup(func(name string) (string, bool) {
		switch name {
		case "MEMVAULT_DSN":
			return strings.TrimSuffix(srv.URI, "/") + "/agents", true
		case "LANGGRAPH_AES_KEY":
			return "0123456789abcdef0123456789abcdef", true
		}
		return "", false
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	db, err := mongovault.Database(cfg)
	fmt.Println("database:", db, err)

	h, err := vault.Open(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer h.Close()
	fmt.Println(h.Backend, cfg.EffectiveEncryption())

	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0),
		ChannelValues:   map[string]any{"messages": []any{"hello"}},
		ChannelVersions: map[string]string{"messages": h.Saver.NextVersion("")}}
	if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: "t1"}, cp, checkpointer.Metadata{"step": 0}, cp.ChannelVersions); err != nil {
		fmt.Println(err)
		return
	}
	t, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "t1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(t.Checkpoint.ChannelValues["messages"])

	if err := h.Store.Put(ctx, store.Namespace{"users", "alice"}, "contact", map[string]any{"text": "prefers email"}); err != nil {
		fmt.Println(err)
		return
	}
	it, err := h.Store.Get(ctx, store.Namespace{"users", "alice"}, "contact")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(it.Value["text"])

	// On the server, the values are sealed: no document of the database
	// holds them in clear.
	client, err := mongo.Connect(options.Client().ApplyURI(srv.URI))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = client.Disconnect(ctx) }()
	names, err := client.Database(db).ListCollectionNames(ctx, bson.D{})
	if err != nil {
		fmt.Println(err)
		return
	}
	clear := false
	for _, name := range names {
		cur, err := client.Database(db).Collection(name).Find(ctx, bson.D{})
		if err != nil {
			fmt.Println(err)
			return
		}
		for cur.Next(ctx) {
			clear = clear || bytes.Contains(cur.Current, []byte("prefers email")) || bytes.Contains(cur.Current, []byte("hello"))
		}
		_ = cur.Close(ctx)
	}
	fmt.Println("in clear on the server:", clear)
	// Output:
	// database: agents <nil>
	// mongodb envelope
	// [hello]
	// prefers email
	// in clear on the server: false
}
