package store_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/memstore"
)

// Memories live under a namespace; Search finds them by filter (and, with
// an index, by meaning), and PutIf updates one only if it is as last read.
func Example() {
	ctx := context.Background()
	s, err := memstore.New(memstore.Options{})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	ns := store.Namespace{"users", "carol", "prefs"}
	if err := s.Put(ctx, ns, "contact", map[string]any{"channel": "email", "stars": 4}); err != nil {
		panic(err)
	}
	found, err := s.Search(ctx, store.Namespace{"users", "carol"}, store.SearchOptions{
		Filter: map[string]any{"stars": map[string]any{"$gte": 4}},
	})
	if err != nil {
		panic(err)
	}
	for _, it := range found {
		fmt.Println(it.Namespace, it.Key, it.Value["channel"])
	}

	it, _ := s.Get(ctx, ns, "contact")
	cond := store.PutCondition{UpdatedAt: it.UpdatedAt}
	fmt.Println(s.PutIf(ctx, ns, "contact", map[string]any{"channel": "sms"}, cond))
	err = s.PutIf(ctx, ns, "contact", map[string]any{"channel": "post"}, cond)
	fmt.Println(errors.Is(err, store.ErrConflict))
	// Output:
	// users.carol.prefs contact email
	// <nil>
	// true
}
