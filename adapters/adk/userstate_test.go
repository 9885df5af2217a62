package adk_test

import (
	"testing"

	"google.golang.org/adk/session"

	"github.com/memvault/memvault/adapters/adk"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/memvaulttest/adaptertest"
	"github.com/memvault/memvault/store"
)

// TestUserStateMoves: "user:" state written where versions before
// per-user namespaces kept it (one item per user, keyed by user id, in the
// app's "user-state" namespace) is still read; a write moves it to the
// user's namespace, MigrateUserState moves the rest, and there it is the
// user's subject's.
func TestUserStateMoves(t *testing.T) {
	for _, b := range adaptertest.Backends(t, adaptertest.Options{}) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := b.Store(t)
			old := func(app, user string) (store.Namespace, string) {
				return store.Namespace{"adk", app, "user-state"}, user
			}
			for _, w := range []struct{ app, user, diet string }{{"desk", "carol.smith", "vegan"}, {"desk", "dave", "halal"}, {"shop", "dave", "kosher"}} {
				ns, key := old(w.app, w.user)
				if err := st.Put(ctx, ns, key, map[string]any{"state": map[string]any{"diet": w.diet}}); err != nil {
					t.Fatal(err)
				}
			}
			svc, err := adk.NewSessionService(st, adk.Options{})
			if err != nil {
				t.Fatal(err)
			}
			userState := func(app, user string) map[string]any {
				t.Helper()
				c, err := svc.Create(ctx, &session.CreateRequest{AppName: app, UserID: user})
				if err != nil {
					t.Fatal(err)
				}
				out := map[string]any{}
				for k, v := range c.Session.State().All() {
					out[k] = v
				}
				return out
			}
			// Read where it was.
			if got := userState("desk", "carol.smith"); got["user:diet"] != "vegan" {
				t.Fatalf("carol's old user state not read: %v", got)
			}
			// A write moves it, keeping what was there.
			c, err := svc.Create(ctx, &session.CreateRequest{AppName: "desk", UserID: "carol.smith", SessionID: "s1"})
			if err != nil {
				t.Fatal(err)
			}
			if err := svc.AppendEvent(ctx, c.Session, &session.Event{ID: "e1", Author: "user", Actions: session.EventActions{StateDelta: map[string]any{"user:lang": "fr"}}}); err != nil {
				t.Fatal(err)
			}
			if ns, key := old("desk", "carol.smith"); mustGetItem(t, st, ns, key) != nil {
				t.Fatal("carol's old user state is still where it was after a write")
			}
			moved := mustGetItem(t, st, store.Namespace{"adk", "desk", "user-state", "carol%2Esmith"}, "state")
			if moved == nil {
				t.Fatal("carol's user state not in her namespace")
			}
			if s, _ := moved.Value["state"].(map[string]any); s["diet"] != "vegan" || s["lang"] != "fr" {
				t.Fatalf("carol's moved state: %v", moved.Value)
			}
			// MigrateUserState moves the rest, once.
			n, err := svc.MigrateUserState(ctx)
			if err != nil || n != 2 {
				t.Fatalf("MigrateUserState = %d, %v; want 2", n, err)
			}
			if n, err := svc.MigrateUserState(ctx); err != nil || n != 0 {
				t.Fatalf("MigrateUserState again = %d, %v; want 0", n, err)
			}
			for _, app := range []string{"desk", "shop"} {
				if page, err := st.(store.Lister).ListItems(ctx, store.Namespace{"adk", app, "user-state"}, store.ListItemsOptions{}); err != nil || len(page) != 0 {
					t.Fatalf("old %s user state left: %v, %v", app, page, err)
				}
			}
			if got := userState("desk", "dave"); got["user:diet"] != "halal" {
				t.Fatalf("dave's desk state after migration: %v", got)
			}
			if got := userState("shop", "dave"); got["user:diet"] != "kosher" {
				t.Fatalf("dave's shop state after migration: %v", got)
			}
			if got := userState("desk", "carol.smith"); got["user:diet"] != "vegan" || got["user:lang"] != "fr" {
				t.Fatalf("carol's state after migration: %v", got)
			}
			// Where user state lives now, the user is the subject.
			subjects := keys.Subjects{NamespacePrefixes: adk.SubjectNamespaces(nil)}
			if got := subjects.NamespaceSubject(store.Namespace{"adk", "shop", "user-state", "dave"}.String()); got != adk.Subject("dave") {
				t.Fatalf("subject of dave's user state: %q", got)
			}
		})
	}
}

func mustGetItem(t *testing.T, st store.Store, ns store.Namespace, key string) *store.Item {
	t.Helper()
	it, err := st.Get(t.Context(), ns, key)
	if err != nil {
		t.Fatal(err)
	}
	return it
}
