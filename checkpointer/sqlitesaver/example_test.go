package sqlitesaver_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
)

// A conversation stored in a file, read back after the saver is reopened.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "memvault-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "agent.db")

	saver, err := sqlitesaver.Open(ctx, path, sqlitesaver.Options{})
	if err != nil {
		log.Fatal(err)
	}
	cfg := checkpointer.Config{ThreadID: "conversation-1"}
	v := saver.NextVersion("")
	cp := &checkpointer.Checkpoint{
		V: 4, ID: checkpointer.NewID(-1),
		ChannelValues:   map[string]any{"messages": []any{"hi"}, "user": "ann"},
		ChannelVersions: map[string]string{"messages": v, "user": v},
	}
	cfg, err = saver.Put(ctx, cfg, cp, checkpointer.Metadata{"source": "input", "step": -1}, cp.ChannelVersions)
	if err != nil {
		log.Fatal(err)
	}
	// Step 0 changes only "messages"; "user" is read at its old version.
	v2 := saver.NextVersion(v)
	cp = &checkpointer.Checkpoint{
		V: 4, ID: checkpointer.NewID(0),
		ChannelValues:   map[string]any{"messages": []any{"hi", "hello!"}},
		ChannelVersions: map[string]string{"messages": v2, "user": v},
	}
	if _, err := saver.Put(ctx, cfg, cp, checkpointer.Metadata{"source": "loop", "step": 0}, map[string]string{"messages": v2}); err != nil {
		log.Fatal(err)
	}
	saver.Close()

	// A restart: the state is still there.
	saver, err = sqlitesaver.Open(ctx, path, sqlitesaver.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer saver.Close()
	latest, err := saver.GetTuple(ctx, checkpointer.Config{ThreadID: "conversation-1"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(latest.Checkpoint.ChannelValues["messages"], latest.Checkpoint.ChannelValues["user"])
	for t, err := range saver.List(ctx, &checkpointer.Config{ThreadID: "conversation-1"},
		checkpointer.ListOptions{Filter: map[string]any{"source": "input"}}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(t.Metadata["source"], t.Metadata["step"])
	}
	// Output:
	// [hi hello!] ann
	// input -1
}
