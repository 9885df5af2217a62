package trpcagent_test

import (
	"context"
	"fmt"

	"trpc.group/trpc-go/trpc-agent-go/graph"

	"github.com/memvault/memvault/adapters/trpcagent"
	"github.com/memvault/memvault/checkpointer/memory"
)

// A tRPC-Agent-Go checkpoint saver on a memvault saver (sqlite.Open or
// postgres.New in production): pass it to graph.WithCheckpointSaver.
func Example() {
	ctx := context.Background()
	saver, err := trpcagent.New(memory.New(memory.Options{}))
	if err != nil {
		panic(err)
	}
	cfg := graph.CreateCheckpointConfig("lineage-1", "", "")
	for i := range 3 {
		cp := graph.NewCheckpoint(map[string]any{"step": i}, map[string]int64{"step": int64(i + 1)}, nil)
		if _, err := saver.Put(ctx, graph.PutRequest{Config: cfg, Checkpoint: cp, Metadata: graph.NewCheckpointMetadata(graph.CheckpointSourceLoop, i)}); err != nil {
			panic(err)
		}
	}
	latest, _ := saver.Get(ctx, cfg)
	all, _ := saver.List(ctx, cfg, nil)
	fmt.Println(latest.ChannelValues["step"], len(all))
	// Output: 2 3
}
