package trpcagent_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"trpc.group/trpc-go/trpc-agent-go/memory"
	"trpc.group/trpc-go/trpc-agent-go/session"

	"github.com/memvault/memvault/adapters/trpcagent"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/memvaulttest/adaptertest"
	"github.com/memvault/memvault/store"
)

// TestForgetUser: with the adapter's SubjectNamespaces as the per-subject
// prefixes, forgetting a user erases her sessions (state, events, tracks),
// her user state and her memories in every app — gone from the store, and
// not readable in a restored copy with any key the operator keeps — while
// another user's stay (see adaptertest.Forget).
func TestForgetUser(t *testing.T) {
	apps := []string{"desk", "shop"}
	services := func(t *testing.T, st store.Store) (*trpcagent.SessionService, *trpcagent.MemoryService) {
		sessions, err := trpcagent.NewSessionService(st, trpcagent.SessionOptions{})
		must(t, err)
		mem, err := trpcagent.NewMemoryService(st, trpcagent.MemoryOptions{})
		must(t, err)
		return sessions, mem
	}
	adaptertest.Forget(t, adaptertest.Erasure{
		Prefixes: trpcagent.SubjectNamespaces(nil),
		Subject:  trpcagent.Subject,
		Write: func(t *testing.T, st store.Store, user string) {
			ctx := t.Context()
			sessions, mem := services(t, st)
			secret := adaptertest.Marker(user)
			for _, app := range apps {
				key := session.Key{AppName: app, UserID: user, SessionID: "s1"}
				sess, err := sessions.CreateSession(ctx, key, session.StateMap{"topic": []byte(secret)})
				must(t, err)
				must(t, sessions.AppendEvent(ctx, sess, userEvent("user", user+" is allergic to peanuts, "+secret, time.Now())))
				must(t, sessions.AppendTrackEvent(ctx, sess, &session.TrackEvent{Track: "audit", Payload: []byte(`"` + secret + `"`), Timestamp: time.Now()}))
				must(t, sessions.UpdateUserState(ctx, session.UserKey{AppName: app, UserID: user}, session.StateMap{"user:diet": []byte(secret + " no peanuts")}))
				must(t, sessions.UpdateAppState(ctx, app, session.StateMap{"app:motd": []byte("welcome")}))
				must(t, mem.AddMemory(ctx, memory.UserKey{AppName: app, UserID: user}, user+" prefers email, "+secret, []string{"contact"}))
			}
		},
		Read: func(t *testing.T, st store.Store, user string) []string {
			ctx := t.Context()
			sessions, mem := services(t, st)
			var out []string
			for _, app := range apps {
				uk := session.UserKey{AppName: app, UserID: user}
				list, err := sessions.ListSessions(ctx, uk)
				must(t, err)
				for _, s := range list {
					for k, v := range s.State {
						out = append(out, fmt.Sprintf("%s %s state %s=%s", app, s.ID, k, v))
					}
					for _, e := range s.Events {
						out = append(out, fmt.Sprintf("%s %s event %s", app, s.ID, e.Response.Choices[0].Message.Content))
					}
					for tr, evs := range s.Tracks {
						for _, e := range evs.Events {
							out = append(out, fmt.Sprintf("%s %s track %s %s", app, s.ID, tr, e.Payload))
						}
					}
				}
				state, err := sessions.ListUserStates(ctx, uk)
				must(t, err)
				for k, v := range state {
					out = append(out, fmt.Sprintf("%s user state %s=%s", app, k, v))
				}
				mems, err := mem.ReadMemories(ctx, memory.UserKey{AppName: app, UserID: user}, 100)
				must(t, err)
				for _, m := range mems {
					out = append(out, fmt.Sprintf("%s memory %s", app, m.Memory.Memory))
				}
			}
			slices.Sort(out)
			return out
		},
	})
}

// TestUserStateMoves: user state written where versions before per-user
// namespaces kept it (one item per user, keyed by the user's label, in the
// app's "user-state" namespace) is still read; a write moves it to the
// user's namespace, MigrateUserState moves the rest, and there it is the
// user's subject's.
func TestUserStateMoves(t *testing.T) {
	for _, b := range adaptertest.Backends(t, adaptertest.Options{}) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := b.Store(t)
			for _, w := range []struct{ app, user, diet string }{{"desk", "carol.smith", "vegan"}, {"desk", "dave", "halal"}, {"shop", "dave", "kosher"}} {
				// As versions before wrote it.
				must(t, st.Put(ctx, store.Namespace{"trpc", w.app, "user-state"}, trpcagent.Subject(w.user), map[string]any{"diet": []byte(w.diet)}, store.WithoutIndex()))
			}
			svc, err := trpcagent.NewSessionService(st, trpcagent.SessionOptions{})
			must(t, err)
			state := func(app, user string) session.StateMap {
				t.Helper()
				s, err := svc.ListUserStates(ctx, session.UserKey{AppName: app, UserID: user})
				must(t, err)
				return s
			}
			if got := state("desk", "carol.smith"); string(got["diet"]) != "vegan" {
				t.Fatalf("carol's old user state not read: %v", got)
			}
			must(t, svc.UpdateUserState(ctx, session.UserKey{AppName: "desk", UserID: "carol.smith"}, session.StateMap{"user:lang": []byte("fr")}))
			if it, err := st.Get(ctx, store.Namespace{"trpc", "desk", "user-state"}, "carol%2Esmith"); it != nil || err != nil {
				t.Fatalf("carol's old user state is still where it was after a write: %v, %v", it, err)
			}
			moved, err := st.Get(ctx, store.Namespace{"trpc", "desk", "user-state", "carol%2Esmith"}, "state")
			if err != nil || moved == nil {
				t.Fatalf("carol's user state not in her namespace: %v", err)
			}
			if d, _ := moved.Value["diet"].([]byte); string(d) != "vegan" {
				t.Fatalf("carol's moved state: %v", moved.Value)
			}
			n, err := svc.MigrateUserState(ctx)
			if err != nil || n != 2 {
				t.Fatalf("MigrateUserState = %d, %v; want 2", n, err)
			}
			if n, err := svc.MigrateUserState(ctx); err != nil || n != 0 {
				t.Fatalf("MigrateUserState again = %d, %v; want 0", n, err)
			}
			for _, app := range []string{"desk", "shop"} {
				if page, err := st.(store.Lister).ListItems(ctx, store.Namespace{"trpc", app, "user-state"}, store.ListItemsOptions{}); err != nil || len(page) != 0 {
					t.Fatalf("old %s user state left: %v, %v", app, page, err)
				}
			}
			for _, c := range []struct{ app, user, diet string }{{"desk", "dave", "halal"}, {"shop", "dave", "kosher"}, {"desk", "carol.smith", "vegan"}} {
				if got := state(c.app, c.user); string(got["diet"]) != c.diet {
					t.Fatalf("%s's %s state after migration: %v", c.user, c.app, got)
				}
			}
			if got := state("desk", "carol.smith"); string(got["lang"]) != "fr" {
				t.Fatalf("carol's state after migration: %v", got)
			}
			subjects := keys.Subjects{NamespacePrefixes: trpcagent.SubjectNamespaces(nil)}
			if got := subjects.NamespaceSubject("trpc.shop.user-state.dave"); got != trpcagent.Subject("dave") {
				t.Fatalf("subject of dave's user state: %q", got)
			}
		})
	}
}
