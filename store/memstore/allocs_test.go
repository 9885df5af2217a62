package memstore_test

import (
	"context"
	"testing"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/memstore"
)

// TestAllocs bounds the allocations of a Get and a Put of this value at
// what the store made before it ran on the engine (9 and 20; the first
// driver seam, with callbacks and key slices through the interface, made
// 15 and 28). Counts of allocations do not depend on timing.
func TestAllocs(t *testing.T) {
	s, err := memstore.New(memstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	ns := store.Namespace{"users", "alice"}
	v := map[string]any{"text": "a memory", "n": 1, "tags": []any{"a", "b"}}
	if err := s.Put(ctx, ns, "k", v); err != nil {
		t.Fatal(err)
	}
	get := testing.AllocsPerRun(100, func() {
		if it, err := s.Get(ctx, ns, "k"); err != nil || it == nil {
			t.Fatal(err)
		}
	})
	put := testing.AllocsPerRun(100, func() {
		if err := s.Put(ctx, ns, "k", v); err != nil {
			t.Fatal(err)
		}
	})
	if get > 9 || put > 20 {
		t.Errorf("allocations: Get %v (want ≤ 9), Put %v (want ≤ 20)", get, put)
	}
}
