package trpcagent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"trpc.group/trpc-go/trpc-agent-go/event"
	"trpc.group/trpc-go/trpc-agent-go/model"
	"trpc.group/trpc-go/trpc-agent-go/session"

	"github.com/memvault/memvault/adapters/trpcagent"
	"github.com/memvault/memvault/memvaulttest/adaptertest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/store"
)

// sessionServices gives each test a service with a prefix of its own on
// every store.
func sessionServices(t *testing.T, opts trpcagent.SessionOptions) map[string]*trpcagent.SessionService {
	t.Helper()
	stores, _ := backendStores(t, adaptertest.Options{})
	out := map[string]*trpcagent.SessionService{}
	for name, st := range stores {
		o := opts
		o.Prefix = store.Namespace{"trpc", strings.ReplaceAll(t.Name(), "/", "-")}
		svc, err := trpcagent.NewSessionService(st, o)
		must(t, err)
		out[name] = svc
	}
	return out
}

// userEvent is a complete user message event at ts, as tRPC's tests make.
func userEvent(author, text string, ts time.Time) *event.Event {
	evt := event.New("test-invocation", author)
	evt.Timestamp = ts
	evt.Response = &model.Response{Choices: []model.Choice{{Message: model.Message{Role: model.RoleUser, Content: text}}}}
	return evt
}

// The cases below port tRPC-Agent-Go's tests of its in-memory session
// service (session/inmemory) onto every memvault store.

func TestSessionGet(t *testing.T) {
	for name, svc := range sessionServices(t, trpcagent.SessionOptions{}) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			for _, d := range []struct {
				app, user, id string
				state         session.StateMap
			}{
				{"app1", "user1", "session1", session.StateMap{"key1": []byte("value1")}},
				{"app1", "user1", "session2", session.StateMap{"key2": []byte("value2")}},
				{"app2", "user2", "session3", session.StateMap{"key3": []byte("value3")}},
			} {
				_, err := svc.CreateSession(ctx, session.Key{AppName: d.app, UserID: d.user, SessionID: d.id}, d.state)
				must(t, err)
			}
			base := time.Now().Add(-2 * time.Hour).UTC()
			for i := range 5 {
				evt := userEvent(fmt.Sprintf("author_%d", i+1), fmt.Sprintf("Test message %d", i+1), base.Add(time.Duration(i)*30*time.Minute))
				must(t, svc.AppendEvent(ctx, &session.Session{AppName: "app1", UserID: "user1", ID: "session1"}, evt))
			}
			key := session.Key{AppName: "app1", UserID: "user1", SessionID: "session1"}
			get := func(opts ...session.Option) *session.Session {
				t.Helper()
				s, err := svc.GetSession(ctx, key, opts...)
				must(t, err)
				return s
			}
			if s := get(); s == nil || s.ID != "session1" || len(s.Events) != 5 || string(s.State["key1"]) != "value1" {
				t.Fatalf("get: %+v", s)
			}
			if s := get(session.WithEventNum(3)); len(s.Events) != 3 || s.Events[0].Author != "author_3" {
				t.Fatalf("EventNum 3: %d events", len(s.Events))
			}
			if s := get(session.WithEventTime(base.Add(45 * time.Minute))); len(s.Events) != 3 || s.Events[0].Author != "author_3" {
				t.Fatalf("EventTime: %d events", len(s.Events))
			}
			if s := get(session.WithEventNum(2), session.WithEventTime(base.Add(30*time.Minute))); len(s.Events) != 2 || s.Events[0].Author != "author_4" {
				t.Fatalf("both filters: %d events", len(s.Events))
			}
			for _, k := range []session.Key{
				{AppName: "app1", UserID: "user1", SessionID: "nonexistent"},
				{AppName: "nonexistent-app", UserID: "user1", SessionID: "session1"},
			} {
				if s, err := svc.GetSession(ctx, k); s != nil || err != nil {
					t.Fatalf("get missing %v: %v, %v", k, s, err)
				}
			}
			if _, err := svc.GetSession(ctx, key, session.WithGetSessionEventPage(0, 2)); !errors.Is(err, session.ErrEventPageUnsupported) {
				t.Fatalf("event page: %v, want ErrEventPageUnsupported", err)
			}
			// Events keep their fields through storage.
			s := get()
			if e := s.Events[4]; e.Author != "author_5" || e.InvocationID != "test-invocation" || e.Response.Choices[0].Message.Content != "Test message 5" || !e.Timestamp.Equal(base.Add(2*time.Hour)) {
				t.Fatalf("stored event: %+v", e)
			}
		})
	}
}

func TestSessionListStateAndDelete(t *testing.T) {
	for name, svc := range sessionServices(t, trpcagent.SessionOptions{}) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			uk := session.UserKey{AppName: "app", UserID: "user.1"}
			for i := range 3 {
				_, err := svc.CreateSession(ctx, session.Key{AppName: uk.AppName, UserID: uk.UserID, SessionID: fmt.Sprintf("s%d", i)}, nil)
				must(t, err)
			}
			must(t, svc.AppendEvent(ctx, &session.Session{AppName: uk.AppName, UserID: uk.UserID, ID: "s0"}, userEvent("user", "hello", time.Now())))
			must(t, svc.UpdateAppState(ctx, "app", session.StateMap{"app:theme": []byte("dark")}))
			must(t, svc.UpdateUserState(ctx, uk, session.StateMap{"user:lang": []byte("fr")}))
			if err := svc.UpdateUserState(ctx, uk, session.StateMap{"app:x": []byte("no")}); err == nil {
				t.Fatal("an app: key in user state was accepted")
			}
			list, err := svc.ListSessions(ctx, uk)
			must(t, err)
			if len(list) != 3 || list[0].ID != "s0" || len(list[0].Events) != 1 {
				t.Fatalf("list: %d sessions, first %s", len(list), list[0].ID)
			}
			for _, s := range list {
				if string(s.State["app:theme"]) != "dark" || string(s.State["user:lang"]) != "fr" {
					t.Fatalf("shared state not merged into %s: %v", s.ID, s.State)
				}
			}
			meta, err := svc.ListSessions(ctx, uk, session.WithListSessionOnlyMeta())
			must(t, err)
			if len(meta) != 3 || len(meta[0].Events) != 0 {
				t.Fatal("WithListSessionOnlyMeta returned events")
			}
			page, err := svc.ListSessions(ctx, uk, session.WithListSessionPage(1, 1))
			must(t, err)
			if len(page) != 1 || page[0].ID != list[1].ID {
				t.Fatalf("page(1,1): %d sessions", len(page))
			}

			key := session.Key{AppName: uk.AppName, UserID: uk.UserID, SessionID: "s1"}
			must(t, svc.UpdateSessionState(ctx, key, session.StateMap{"step": []byte("2"), "temp:draft": []byte("x")}))
			if err := svc.UpdateSessionState(ctx, key, session.StateMap{"user:lang": []byte("de")}); err == nil {
				t.Fatal("a user: key in session state was accepted")
			}
			if err := svc.UpdateSessionState(ctx, session.Key{AppName: "app", UserID: "user.1", SessionID: "none"}, session.StateMap{"k": nil}); !errors.Is(err, trpcagent.ErrSessionNotFound) {
				t.Fatalf("update of a missing session: %v", err)
			}
			s, err := svc.GetSession(ctx, key)
			must(t, err)
			if string(s.State["step"]) != "2" {
				t.Fatalf("session state: %v", s.State)
			}

			must(t, svc.DeleteAppState(ctx, "app", "app:theme"))
			must(t, svc.DeleteUserState(ctx, uk, "lang"))
			if st, _ := svc.ListAppStates(ctx, "app"); len(st) != 0 {
				t.Fatalf("app state after delete: %v", st)
			}
			if st, _ := svc.ListUserStates(ctx, uk); len(st) != 0 {
				t.Fatalf("user state after delete: %v", st)
			}
			must(t, svc.DeleteSession(ctx, key))
			must(t, svc.DeleteSession(ctx, key)) // twice is fine
			if s, err := svc.GetSession(ctx, key); s != nil || err != nil {
				t.Fatalf("after delete: %v %v", s, err)
			}
			if err := svc.AppendEvent(ctx, &session.Session{AppName: "app", UserID: "user.1", ID: "s1"}, userEvent("user", "x", time.Now())); !errors.Is(err, trpcagent.ErrSessionNotFound) {
				t.Fatalf("append to a deleted session: %v", err)
			}
			if _, err := svc.CreateSession(ctx, session.Key{UserID: "u"}, nil); !errors.Is(err, session.ErrAppNameRequired) {
				t.Fatalf("empty app: %v", err)
			}
		})
	}
}

// TestSessionConcurrentAppends: handles on two services (two processes) of
// one store append at once; no event and no state key is lost.
func TestSessionConcurrentAppends(t *testing.T) {
	stores, _ := backendStores(t, adaptertest.Options{})
	for name, st := range stores {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			a, err := trpcagent.NewSessionService(st, trpcagent.SessionOptions{})
			must(t, err)
			b, err := trpcagent.NewSessionService(st, trpcagent.SessionOptions{})
			must(t, err)
			key := session.Key{AppName: "app", UserID: "u", SessionID: "busy"}
			_, err = a.CreateSession(ctx, key, nil)
			must(t, err)
			const each = 10
			var wg sync.WaitGroup
			errs := make(chan error, 2*each)
			for w, svc := range []*trpcagent.SessionService{a, b} {
				wg.Go(func() {
					h, err := svc.GetSession(ctx, key)
					if err != nil {
						errs <- err
						return
					}
					for i := range each {
						evt := userEvent("user", fmt.Sprintf("w%d-%d", w, i), time.Now())
						evt.StateDelta = map[string][]byte{fmt.Sprintf("w%d-%d", w, i): []byte("1")}
						if err := svc.AppendEvent(ctx, h, evt); err != nil {
							errs <- err
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			s, err := a.GetSession(ctx, key)
			must(t, err)
			if len(s.Events) != 2*each || len(s.State) != 2*each {
				t.Fatalf("%d events and %d state keys, want %d", len(s.Events), len(s.State), 2*each)
			}
		})
	}
}

// TestSessionRestartEncrypted: a session written by one process is read by
// the next from the same encrypted SQLite file, and the file holds none of
// it in plaintext.
func TestSessionRestartEncrypted(t *testing.T) {
	ctx := context.Background()
	sq := adaptertest.Backends(t, adaptertest.Options{})[1] // encrypted SQLite
	open := func() *trpcagent.SessionService {
		svc, err := trpcagent.NewSessionService(sq.Store(t), trpcagent.SessionOptions{EventLimit: 3})
		must(t, err)
		return svc
	}
	first := open()
	key := session.Key{AppName: "clinic", UserID: "patient-7", SessionID: "visit"}
	h, err := first.CreateSession(ctx, key, session.StateMap{"diagnosis": []byte("type 2 diabetes")})
	must(t, err)
	for i, text := range []string{"I take metformin", "my glucose was 180", "any side effects?", "thanks"} {
		must(t, first.AppendEvent(ctx, h, userEvent("user", text, time.Now().Add(time.Duration(i)*time.Second))))
	}
	must(t, first.AppendTrackEvent(ctx, h, &session.TrackEvent{Track: "vitals", Payload: json.RawMessage(`{"bp":"140/90"}`), Timestamp: time.Now()}))

	second := open()
	s, err := second.GetSession(ctx, key)
	must(t, err)
	if s == nil || string(s.State["diagnosis"]) != "type 2 diabetes" || len(s.Events) != 3 || s.Events[2].Response.Choices[0].Message.Content != "thanks" {
		t.Fatalf("after restart: %+v", s)
	}
	tr, err := s.GetTrackEvents("vitals")
	must(t, err)
	if len(tr.Events) != 1 || string(tr.Events[0].Payload) != `{"bp":"140/90"}` {
		t.Fatalf("track after restart: %+v", tr)
	}
	testkeys.NoPlaintext(t, sq.Files, "diabetes", "metformin", "glucose", "140/90")
}

// scriptedSummarizer stands in for the model tRPC's summarizer calls.
type scriptedSummarizer struct{ calls int }

func (s *scriptedSummarizer) ShouldSummarize(sess *session.Session) bool {
	return len(sess.Events) >= 2
}
func (s *scriptedSummarizer) Summarize(_ context.Context, sess *session.Session) (string, error) {
	s.calls++
	return fmt.Sprintf("%d events", len(sess.Events)), nil
}
func (s *scriptedSummarizer) SetPrompt(string)         {}
func (s *scriptedSummarizer) SetModel(model.Model)     {}
func (s *scriptedSummarizer) Metadata() map[string]any { return nil }

func TestSessionSummaries(t *testing.T) {
	sum := &scriptedSummarizer{}
	for name, svc := range sessionServices(t, trpcagent.SessionOptions{Summarizer: sum}) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			key := session.Key{AppName: "app", UserID: "u", SessionID: "s"}
			h, err := svc.CreateSession(ctx, key, nil)
			must(t, err)
			must(t, svc.AppendEvent(ctx, h, userEvent("user", "one", time.Now())))
			before := sum.calls
			must(t, svc.CreateSessionSummary(ctx, h, "", false))
			if sum.calls != before {
				t.Fatal("summarized although ShouldSummarize said no")
			}
			if _, ok := svc.GetSessionSummaryText(ctx, h); ok {
				t.Fatal("a summary exists before any was made")
			}
			must(t, svc.AppendEvent(ctx, h, userEvent("user", "two", time.Now())))
			must(t, svc.EnqueueSummaryJob(ctx, h, "", false))
			if text, ok := svc.GetSessionSummaryText(ctx, h); !ok || text != "2 events" {
				t.Fatalf("summary on the handle: %q %v", text, ok)
			}
			stored, err := svc.GetSession(ctx, key)
			must(t, err)
			if text, ok := svc.GetSessionSummaryText(ctx, stored); !ok || text != "2 events" {
				t.Fatalf("stored summary: %q %v", text, ok)
			}
		})
	}
}
