package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/memstore"
)

// TestUpdateEveryWriterLands: writers incrementing one counter at once all
// land, each exactly once.
func TestUpdateEveryWriterLands(t *testing.T) {
	s, err := memstore.New(memstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ns := store.Namespace{"counters"}
	const writers, each = 8, 25
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				err := store.Update(context.Background(), s, ns, "n", func(cur *store.Item) (map[string]any, error) {
					n := int64(0)
					if cur != nil {
						n = cur.Value["n"].(int64)
					}
					return map[string]any{"n": n + 1}, nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	it, err := s.Get(context.Background(), ns, "n")
	if err != nil {
		t.Fatal(err)
	}
	if got := it.Value["n"]; got != int64(writers*each) {
		t.Fatalf("counter = %v, want %d", got, writers*each)
	}
	stop := errors.New("stop")
	err = store.Update(context.Background(), s, ns, "n", func(*store.Item) (map[string]any, error) { return nil, stop })
	if !errors.Is(err, stop) {
		t.Fatalf("change's error: %v", err)
	}
}
