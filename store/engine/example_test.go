package engine_test

import (
	"context"
	"fmt"
	"log"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/engine"
	"github.com/memvault/memvault/store/memstore"
)

// A store is a driver with the engine embedded: memstore.Store is the
// engine on the in-memory driver, so every rule of the contract — here the
// refusal of an empty key — is the engine's.
func Example() {
	ctx := context.Background()
	s, err := memstore.New(memstore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	var _ *engine.Engine = s.Engine

	if err := s.Put(ctx, store.Namespace{"users", "ann"}, "prefs", map[string]any{"tone": "brief"}); err != nil {
		log.Fatal(err)
	}
	it, err := s.Get(ctx, store.Namespace{"users", "ann"}, "prefs")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(it.Value["tone"])
	fmt.Println(s.Put(ctx, store.Namespace{"users", "ann"}, "", map[string]any{}) != nil)
	// Output:
	// brief
	// true
}
