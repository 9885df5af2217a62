package core_test

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/internal/core"
	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/serde"
)

// ExamplePutWrites shows the rows of a task's writes: special channels at
// their fixed negative indexes, one row per index, in index order; writes
// only to special channels replace stored rows.
func ExamplePutWrites() {
	c := binding.New(serde.JSONPlus{})
	cfg := checkpointer.Config{ThreadID: "t", CheckpointID: checkpointer.NewID(0)}
	w, err := core.PutWrites(context.Background(), c, cfg, []checkpointer.Write{
		{Channel: "messages", Value: "hi"},
		{Channel: checkpointer.ChannelError, Value: "boom"},
		{Channel: "scratch", Value: 1},
	}, "task-1", "")
	if err != nil {
		panic(err)
	}
	for _, r := range w.Rows {
		fmt.Println(r.Idx, r.Channel, r.Type)
	}
	fmt.Println("upsert:", w.Upsert)
	w, _ = core.PutWrites(context.Background(), c, cfg, []checkpointer.Write{
		{Channel: checkpointer.ChannelInterrupt, Value: "first"},
		{Channel: checkpointer.ChannelInterrupt, Value: "second"},
	}, "task-1", "")
	fmt.Println(len(w.Rows), "row, upsert:", w.Upsert)
	// Output:
	// -1 __error__ json
	// 0 messages json
	// 2 scratch json
	// upsert: false
	// 1 row, upsert: true
}
