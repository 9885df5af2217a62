package adk_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/adk/memory"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/memvault/memvault/adapters/adk"
	"github.com/memvault/memvault/memvaulttest/adaptertest"
)

// TestHostileIDs: app names, user ids and session ids a careless caller or
// an attacker passes — empty, NUL, invalid UTF-8, 64 KiB — never panic,
// and an error never quotes a long id whole (a 64 KiB id made a 64 KiB
// error, into logs). Ids accepted come back as they went in.
func TestHostileIDs(t *testing.T) {
	ctx := context.Background()
	long := strings.Repeat("L", 64<<10)
	hostile := map[string]string{"empty": "", "nul": "a\x00b", "bad utf8": "a\xffb", "64KiB": long, "dots": "a.b%2E"}
	b := adaptertest.Backends(t, adaptertest.Options{Indexed: true})[1] // sqlite, encrypted
	st := b.Store(t)
	sessions, err := adk.NewSessionService(st, adk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	memories, err := adk.NewMemoryService(st, adk.MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	short := func(what string, err error) {
		t.Helper()
		if err != nil && len(err.Error()) > 2048 {
			t.Errorf("%s: error of %d bytes: %.120s…", what, len(err.Error()), err)
		}
	}
	for name, id := range hostile {
		for _, role := range []string{"app", "user", "session"} {
			app, user, sid := "desk", "carol", "s-"+role
			switch role {
			case "app":
				app = id
			case "user":
				user = id
			case "session":
				sid = id
			}
			what := role + " " + name
			created, err := sessions.Create(ctx, &session.CreateRequest{AppName: app, UserID: user, SessionID: sid})
			short(what+": Create", err)
			got, err := sessions.Get(ctx, &session.GetRequest{AppName: app, UserID: user, SessionID: sid})
			short(what+": Get", err)
			if created != nil && err == nil {
				s := got.Session
				if s.AppName() != app || s.UserID() != user || (sid != "" && s.ID() != sid) {
					t.Errorf("%s: came back as %q/%q/%q", what, s.AppName(), s.UserID(), s.ID())
				}
				ev := &session.Event{ID: "e1", InvocationID: "inv", Author: "user", Timestamp: time.Now()}
				ev.Content = genai.NewContentFromText("hello there", genai.RoleUser)
				short(what+": AppendEvent", sessions.AppendEvent(ctx, s, ev))
				short(what+": AddSessionToMemory", memories.AddSessionToMemory(ctx, s))
			}
			_, err = sessions.List(ctx, &session.ListRequest{AppName: app, UserID: user})
			short(what+": List", err)
			_, err = memories.SearchMemory(ctx, &memory.SearchRequest{AppName: app, UserID: user, Query: "hello"})
			short(what+": SearchMemory", err)
			short(what+": Delete", sessions.Delete(ctx, &session.DeleteRequest{AppName: app, UserID: user, SessionID: sid}))
		}
	}
}
