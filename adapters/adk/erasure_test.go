package adk_test

import (
	"fmt"
	"slices"
	"testing"

	"google.golang.org/adk/memory"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/memvault/memvault/adapters/adk"
	"github.com/memvault/memvault/memvaulttest/adaptertest"
	"github.com/memvault/memvault/store"
)

// apps are the ADK apps the erasure test writes in: a user's data spans
// apps, and one set of prefixes covers them all.
var apps = []string{"desk", "shop"}

// TestForgetUser: with the adapter's SubjectNamespaces as the per-subject
// prefixes, forgetting a user erases her sessions, events, "user:" state
// and memories in every app — gone from the store, and not readable in a
// restored copy with any key the operator keeps — while another user's
// stay (see adaptertest.Forget).
func TestForgetUser(t *testing.T) {
	services := func(t *testing.T, st store.Store) (*adk.SessionService, *adk.MemoryService) {
		sessions, err := adk.NewSessionService(st, adk.Options{})
		if err != nil {
			t.Fatal(err)
		}
		mem, err := adk.NewMemoryService(st, adk.MemoryOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return sessions, mem
	}
	adaptertest.Forget(t, adaptertest.Erasure{
		Prefixes: adk.SubjectNamespaces(nil),
		Subject:  adk.Subject,
		Write: func(t *testing.T, st store.Store, user string) {
			ctx := t.Context()
			sessions, mem := services(t, st)
			secret := adaptertest.Marker(user)
			for _, app := range apps {
				c, err := sessions.Create(ctx, &session.CreateRequest{AppName: app, UserID: user, SessionID: "s1",
					State: map[string]any{"topic": secret, "user:diet": secret + " no peanuts", "app:motd": "welcome"}})
				if err != nil {
					t.Fatal(err)
				}
				ev := &session.Event{ID: "e1", Author: "user", Actions: session.EventActions{StateDelta: map[string]any{"user:lang": secret + " fr"}}}
				ev.Content = genai.NewContentFromText(user+" is allergic to peanuts, "+secret, genai.RoleUser)
				if err := sessions.AppendEvent(ctx, c.Session, ev); err != nil {
					t.Fatal(err)
				}
				got, err := sessions.Get(ctx, &session.GetRequest{AppName: app, UserID: user, SessionID: "s1"})
				if err != nil {
					t.Fatal(err)
				}
				if err := mem.AddSessionToMemory(ctx, got.Session); err != nil {
					t.Fatal(err)
				}
			}
		},
		Read: func(t *testing.T, st store.Store, user string) []string {
			ctx := t.Context()
			sessions, mem := services(t, st)
			var out []string
			for _, app := range apps {
				list, err := sessions.List(ctx, &session.ListRequest{AppName: app, UserID: user})
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range list.Sessions {
					got, err := sessions.Get(ctx, &session.GetRequest{AppName: app, UserID: user, SessionID: s.ID()})
					if err != nil {
						t.Fatal(err)
					}
					for k, v := range got.Session.State().All() {
						out = append(out, fmt.Sprintf("%s state %s=%v", app, k, v))
					}
					for ev := range got.Session.Events().All() {
						out = append(out, fmt.Sprintf("%s event %s %s", app, ev.ID, ev.Content.Parts[0].Text))
					}
				}
				found, err := mem.SearchMemory(ctx, &memory.SearchRequest{AppName: app, UserID: user, Query: user + " is allergic to peanuts, " + adaptertest.Marker(user)})
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range found.Memories {
					out = append(out, fmt.Sprintf("%s memory %s %s", app, m.ID, m.Content.Parts[0].Text))
				}
			}
			slices.Sort(out)
			return out
		},
	})
}
