package redissaver_test

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/backends/redis/redissaver"
	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/checkpointer"
)

// Example stores a checkpoint in Redis (here a throwaway Redis 8 server)
// and reads it back.
func Example() {
	ctx := context.Background()
	srv, err := redistest.Start(redistest.Options{Version: 8})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Stop()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
	defer func() { _ = rdb.Close() }()

	saver, err := redissaver.New(rdb, redissaver.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = saver.Close() }()
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
