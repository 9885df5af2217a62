package eino_test

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/adapters/eino"
	"github.com/memvault/memvault/checkpointer/memsaver"
)

// Each Set is a new checkpoint of the id: Get returns the latest, History
// lists them all, KeepLast bounds them.
func Example() {
	ctx := context.Background()
	// sqlitestore.Open or pgstore.New in production; pass the store to
	// compose.WithCheckPointStore when compiling a graph.
	saver, err := memsaver.New(memsaver.Options{})
	if err != nil {
		panic(err)
	}
	store, err := eino.NewCheckPointStore(saver, eino.Options{KeepLast: 2})
	if err != nil {
		panic(err)
	}
	for _, step := range []string{"draft", "review", "approve"} {
		_ = store.Set(ctx, "run-1", []byte(step))
	}
	latest, ok, _ := store.Get(ctx, "run-1")
	hist, _ := store.History(ctx, "run-1")
	fmt.Println(string(latest), ok, len(hist), string(hist[1].Data))
	// Output: approve true 2 review
}
