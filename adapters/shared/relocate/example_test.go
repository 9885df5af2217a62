package relocate_test

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/adapters/shared/relocate"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/memstore"
)

// User state that an older layout kept in one namespace per app is read
// through Get while it has not moved, moved by the first Update, and the
// rest moved at once by Move.
func Example() {
	ctx := context.Background()
	st, err := memstore.New(memstore.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()

	// The old layout: one item per user under the app's namespace.
	oldNS := store.Namespace{"app1", "user_state"}
	for _, u := range []string{"alice", "bob"} {
		if err := st.Put(ctx, oldNS, u, map[string]any{"visits": 1}); err != nil {
			fmt.Println(err)
			return
		}
	}
	// The new layout: a namespace per user.
	newPlace := func(user string) relocate.Place {
		return relocate.Place{Namespace: store.Namespace{"users", user, "app1"}, Key: "state"}
	}
	oldPlace := func(user string) relocate.Place { return relocate.Place{Namespace: oldNS, Key: user} }

	it, err := relocate.Get(ctx, st, newPlace("alice"), oldPlace("alice"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("read from", it.Namespace, it.Value["visits"])

	err = relocate.Update(ctx, st, newPlace("alice"), oldPlace("alice"), func(cur *store.Item) (map[string]any, error) {
		// cur is the old item here: nothing is at the new place yet.
		return map[string]any{"visits": cur.Value["visits"], "theme": "dark"}, nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	it, _ = st.Get(ctx, newPlace("alice").Namespace, "state")
	gone, _ := st.Get(ctx, oldNS, "alice")
	fmt.Println("alice now", it.Value["visits"], it.Value["theme"], "old item left:", gone != nil)

	n, err := relocate.Move(ctx, st, oldNS, func(_ store.Namespace, key string) relocate.Place { return newPlace(key) })
	if err != nil {
		fmt.Println(err)
		return
	}
	it, _ = st.Get(ctx, newPlace("bob").Namespace, "state")
	fmt.Println("moved", n, "bob now", it.Value["visits"])
	// Output:
	// read from app1.user_state 1
	// alice now 1 dark old item left: false
	// moved 1 bob now 1
}
