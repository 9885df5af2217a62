package memsaver_test

import (
	"context"
	"fmt"
	"log"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/memsaver"
)

// Two steps of a conversation, a pending write, then the history.
func Example() {
	ctx := context.Background()
	saver, err := memsaver.New(memsaver.Options{VersionStyle: checkpointer.VersionInt})
	if err != nil {
		log.Fatal(err)
	}
	cfg := checkpointer.Config{ThreadID: "conversation-1"}

	// Step -1: the input. Every channel in newVersions is stored.
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

	// Step 0: only "messages" changes; "user" is read at its old version.
	v2 := saver.NextVersion(v)
	cp = &checkpointer.Checkpoint{
		V: 4, ID: checkpointer.NewID(0),
		ChannelValues:   map[string]any{"messages": []any{"hi", "hello!"}},
		ChannelVersions: map[string]string{"messages": v2, "user": v},
	}
	cfg, err = saver.Put(ctx, cfg, cp, checkpointer.Metadata{"source": "loop", "step": 0}, map[string]string{"messages": v2})
	if err != nil {
		log.Fatal(err)
	}
	if err := saver.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "messages", Value: "next"}}, "task-1", ""); err != nil {
		log.Fatal(err)
	}

	latest, err := saver.GetTuple(ctx, checkpointer.Config{ThreadID: "conversation-1"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(latest.Checkpoint.ChannelValues["messages"], latest.Checkpoint.ChannelValues["user"])
	fmt.Println(latest.ParentConfig != nil, len(latest.PendingWrites), latest.PendingWrites[0].Value)

	for t, err := range saver.List(ctx, &checkpointer.Config{ThreadID: "conversation-1"}, checkpointer.ListOptions{}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(t.Metadata["source"], t.Metadata["step"], t.Checkpoint.ChannelVersions["messages"])
	}
	// Output:
	// [hi hello!] ann
	// true 1 next
	// loop 0 2
	// input -1 1
}
