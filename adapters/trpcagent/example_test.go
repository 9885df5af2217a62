package trpcagent_test

import (
	"context"
	"fmt"

	"trpc.group/trpc-go/trpc-agent-go/graph"
	"trpc.group/trpc-go/trpc-agent-go/memory"
	"trpc.group/trpc-go/trpc-agent-go/session"

	"github.com/memvault/memvault/adapters/trpcagent"
	"github.com/memvault/memvault/checkpointer/memsaver"
	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/memstore"
)

// A tRPC-Agent-Go checkpoint saver on a memvault saver (sqlitesaver.Open or
// pgsaver.New in production): pass it to graph.WithCheckpointSaver.
func Example() {
	ctx := context.Background()
	mem, err := memsaver.New(memsaver.Options{})
	if err != nil {
		panic(err)
	}
	saver, err := trpcagent.New(mem)
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

// tRPC-Agent-Go's session and memory services on one memvault store (give
// sqlitestore.Open or pgstore.New a serde to encrypt): pass them to
// runner.WithSessionService and runner.WithMemoryService.
func ExampleNewSessionService() {
	ctx := context.Background()
	st, err := memstore.New(memstore.Options{Index: &store.IndexConfig{Embedder: embeddings.NewUnkeyedHashing(256)}})
	if err != nil {
		panic(err)
	}
	defer st.Close()
	sessions, _ := trpcagent.NewSessionService(st, trpcagent.SessionOptions{})
	memories, _ := trpcagent.NewMemoryService(st, trpcagent.MemoryOptions{})

	key := session.Key{AppName: "desk", UserID: "carol", SessionID: "t1"}
	sess, _ := sessions.CreateSession(ctx, key, session.StateMap{"topic": []byte("refund")})
	_ = sessions.UpdateUserState(ctx, session.UserKey{AppName: "desk", UserID: "carol"}, session.StateMap{"lang": []byte("fr")})
	got, _ := sessions.GetSession(ctx, key)

	user := memory.UserKey{AppName: "desk", UserID: "carol"}
	_ = memories.AddMemory(ctx, user, "Carol prefers refunds by bank transfer", []string{"billing"})
	found, _ := memories.SearchMemories(ctx, user, "how does carol want refunds")
	fmt.Println(sess.ID, string(got.State["topic"]), string(got.State["user:lang"]), found[0].Memory.Memory)
	// Output: t1 refund fr Carol prefers refunds by bank transfer
}
