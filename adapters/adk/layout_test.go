package adk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/memvault/memvault/adapters/adk"
	"github.com/memvault/memvault/memvaulttest/adaptertest"
	"github.com/memvault/memvault/store"
)

// writeCounter is a real store that notes how many bytes (of the values'
// JSON) each write hands it.
type writeCounter struct {
	store.Store
	mu      sync.Mutex
	written int
	// failPutIf makes PutIf fail without writing, as a process that died
	// before it would.
	failPutIf bool
}

func (w *writeCounter) count(v map[string]any) {
	b, _ := json.Marshal(v)
	w.mu.Lock()
	w.written += len(b)
	w.mu.Unlock()
}

func (w *writeCounter) take() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.written
	w.written = 0
	return n
}

func (w *writeCounter) Put(ctx context.Context, ns store.Namespace, key string, v map[string]any, opts ...store.PutOption) error {
	w.count(v)
	return w.Store.Put(ctx, ns, key, v, opts...)
}

func (w *writeCounter) Batch(ctx context.Context, ops []store.Op) ([]store.Result, error) {
	for _, op := range ops {
		if p, ok := op.(store.PutOp); ok {
			w.count(p.Value)
		}
	}
	return w.Store.Batch(ctx, ops)
}

func (w *writeCounter) PutIf(ctx context.Context, ns store.Namespace, key string, v map[string]any, cond store.PutCondition, opts ...store.PutOption) error {
	w.count(v)
	if w.failPutIf {
		return errors.New("the process died")
	}
	return w.Store.(store.ConditionalPutter).PutIf(ctx, ns, key, v, cond, opts...)
}

func (w *writeCounter) ListItems(ctx context.Context, ns store.Namespace, opt store.ListItemsOptions) ([]store.Item, error) {
	return w.Store.(store.Lister).ListItems(ctx, ns, opt)
}

func (w *writeCounter) DeletePrefix(ctx context.Context, prefix store.Namespace) (int, error) {
	return w.Store.(store.PrefixDeleter).DeletePrefix(ctx, prefix)
}

func textEvent(id, text string, delta map[string]any) *session.Event {
	ev := &session.Event{ID: id, InvocationID: "inv", Author: "user", Timestamp: time.Now()}
	ev.Content = genai.NewContentFromText(text, genai.RoleUser)
	ev.Actions.StateDelta = delta
	return ev
}

// TestAppendWritesOnlyTheEvent: an append hands the store the new event
// and the session's small item, not the session's history: the 300th
// append of a session writes about what its 2nd did. (Before events had
// items of their own, every append rewrote all of them.)
func TestAppendWritesOnlyTheEvent(t *testing.T) {
	for _, b := range adaptertest.Backends(t, adaptertest.Options{Plaintext: true}) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			w := &writeCounter{Store: b.Store(t)}
			svc, err := adk.NewSessionService(w, adk.Options{})
			if err != nil {
				t.Fatal(err)
			}
			c, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u.1", SessionID: "s1"})
			if err != nil {
				t.Fatal(err)
			}
			var second int
			for i := range 300 {
				w.take()
				ev := textEvent(fmt.Sprintf("e%03d", i), fmt.Sprintf("turn %03d of a conversation that goes on", i), map[string]any{"turn": i})
				if err := svc.AppendEvent(ctx, c.Session, ev); err != nil {
					t.Fatal(err)
				}
				n := w.take()
				if i == 1 {
					second = n
				}
				if i > 1 && n > 2*second {
					t.Fatalf("append %d wrote %d bytes, the 2nd %d: appends rewrite the history", i+1, n, second)
				}
			}
			got := mustGet(t, svc, "s1")
			if n := got.Events().Len(); n != 300 {
				t.Fatalf("events = %d, want 300", n)
			}
			for i := range 300 {
				if id := got.Events().At(i).ID; id != fmt.Sprintf("e%03d", i) {
					t.Fatalf("event %d is %s", i, id)
				}
			}
		})
	}
}

// TestConcurrentWriters: 4 writers, each with its own service (on its own
// store handle where the backend has several), append N events each to
// one session, getting the session again when their handle went stale.
// All 4N events are there, each writer's in its order, and every state
// change (each writer's own key, and a "user:" one) landed.
func TestConcurrentWriters(t *testing.T) {
	const writers, n = 4, 15
	for _, b := range adaptertest.Backends(t, adaptertest.Options{}) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			services := make([]*adk.SessionService, writers)
			for i := range services {
				svc, err := adk.NewSessionService(b.Store(t), adk.Options{})
				if err != nil {
					t.Fatal(err)
				}
				services[i] = svc
			}
			if _, err := services[0].Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u.1", SessionID: "s1"}); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			for w := range writers {
				wg.Go(func() {
					_, err := appendEvents(ctx, services[w], "u.1", "s1", n, func(i int) *session.Event {
						delta := map[string]any{fmt.Sprintf("w%d", w): i, fmt.Sprintf("user:w%d", w): i}
						return textEvent(fmt.Sprintf("w%d-%02d", w, i), "hello", delta)
					})
					if err != nil {
						errs <- fmt.Errorf("writer %d: %w", w, err)
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			got := mustGet(t, services[0], "s1")
			if got.Events().Len() != writers*n {
				t.Fatalf("events = %d, want %d", got.Events().Len(), writers*n)
			}
			next := make([]int, writers)
			for ev := range got.Events().All() {
				var w, i int
				if _, err := fmt.Sscanf(ev.ID, "w%d-%d", &w, &i); err != nil {
					t.Fatal(err)
				}
				if i != next[w] {
					t.Fatalf("writer %d: event %d after %d", w, i, next[w]-1)
				}
				next[w]++
			}
			for w := range writers {
				for _, k := range []string{fmt.Sprintf("w%d", w), fmt.Sprintf("user:w%d", w)} {
					v, err := got.State().Get(k)
					if err != nil || fmt.Sprint(v) != fmt.Sprint(n-1) {
						t.Fatalf("state %s = %v, %v; want %d", k, v, err, n-1)
					}
				}
			}
		})
	}
}

// TestOldLayoutSession: a session as versions before per-event items
// stored it (one item holding its state and ADK's JSON of all its events,
// written here as that code wrote it) is read as it is, with Get's
// filters; its first append moves its events to items of their own, after
// which it reads the same plus the new event, and the session item no
// longer holds the events.
func TestOldLayoutSession(t *testing.T) {
	for _, b := range adaptertest.Backends(t, adaptertest.Options{}) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := b.Store(t)
			t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
			var old []*session.Event
			for i := range 40 {
				ev := textEvent(fmt.Sprintf("e%02d", i), fmt.Sprintf("old turn %d", i), map[string]any{"topic": fmt.Sprintf("t%d", i)})
				ev.Timestamp = t0.Add(time.Duration(i) * time.Minute)
				old = append(old, ev)
			}
			js, err := json.Marshal(old)
			if err != nil {
				t.Fatal(err)
			}
			ns := store.Namespace{"adk", "app", "sessions", "u%2E1"}
			if err := st.Put(ctx, ns, "s1", map[string]any{
				"rev": int64(41), "updated_ns": old[39].Timestamp.UnixNano(),
				"state": map[string]any{"topic": "t39"}, "events": js,
			}); err != nil {
				t.Fatal(err)
			}
			svc, err := adk.NewSessionService(st, adk.Options{})
			if err != nil {
				t.Fatal(err)
			}
			check := func(total int) {
				t.Helper()
				ids := func(req session.GetRequest) []string {
					t.Helper()
					req.AppName, req.UserID, req.SessionID = "app", "u.1", "s1"
					r, err := svc.Get(ctx, &req)
					if err != nil {
						t.Fatal(err)
					}
					var out []string
					for ev := range r.Session.Events().All() {
						out = append(out, ev.ID)
					}
					return out
				}
				all := ids(session.GetRequest{})
				if len(all) != total || all[0] != "e00" || all[39] != "e39" {
					t.Fatalf("events: %v", all)
				}
				if got := ids(session.GetRequest{NumRecentEvents: 3}); fmt.Sprint(got) != fmt.Sprint(all[total-3:]) {
					t.Fatalf("3 recent: %v", got)
				}
				if got := ids(session.GetRequest{After: t0.Add(10 * time.Minute)}); fmt.Sprint(got) != fmt.Sprint(all[10:]) {
					t.Fatalf("after 10 min: %v", got)
				}
				if got := ids(session.GetRequest{NumRecentEvents: 35, After: t0.Add(10 * time.Minute)}); fmt.Sprint(got) != fmt.Sprint(all[max(total-35, 10):]) {
					t.Fatalf("35 recent after 10 min: %v", got)
				}
			}
			check(40)
			h := mustGet(t, svc, "s1")
			if v, _ := h.State().Get("topic"); v != "t39" {
				t.Fatalf("state topic = %v", v)
			}
			ev := textEvent("e40", "new turn", map[string]any{"topic": "t40"})
			ev.Timestamp = t0.Add(40 * time.Minute)
			if err := svc.AppendEvent(ctx, h, ev); err != nil {
				t.Fatal(err)
			}
			check(41)
			it, err := st.Get(ctx, ns, "s1")
			if err != nil || it == nil {
				t.Fatalf("session item: %v, %v", it, err)
			}
			if _, ok := it.Value["events"]; ok {
				t.Fatal("the session item still holds its events after an append")
			}
			if v, _ := mustGet(t, svc, "s1").State().Get("topic"); v != "t40" {
				t.Fatalf("state topic = %v", v)
			}
		})
	}
}

// TestLongSessionFilters: Get's NumRecentEvents and After on a session
// longer than the windows Get reads from its end.
func TestLongSessionFilters(t *testing.T) {
	b := adaptertest.Backends(t, adaptertest.Options{Plaintext: true})[1] // sqlite
	ctx := t.Context()
	svc, err := adk.NewSessionService(b.Store(t), adk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u.1", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	const total = 150
	for i := range total {
		ev := textEvent(fmt.Sprintf("e%03d", i), "turn", nil)
		ev.Timestamp = t0.Add(time.Duration(i) * time.Second)
		if err := svc.AppendEvent(ctx, c.Session, ev); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ num, after, first int }{
		{0, -1, 0}, {1, -1, total - 1}, {100, -1, total - 100}, {total + 5, -1, 0},
		{0, 0, 0}, {0, 3, 3}, {0, 140, 140}, {0, total - 1, total - 1}, {0, total + 10, total}, {20, 3, total - 20}, {100, 120, 120},
	} {
		req := &session.GetRequest{AppName: "app", UserID: "u.1", SessionID: "s1", NumRecentEvents: tc.num}
		if tc.after >= 0 {
			req.After = t0.Add(time.Duration(tc.after) * time.Second)
		}
		r, err := svc.Get(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		evs := r.Session.Events()
		if evs.Len() != total-tc.first {
			t.Fatalf("num %d after %d: %d events, want %d", tc.num, tc.after, evs.Len(), total-tc.first)
		}
		for i := range evs.Len() {
			if id := evs.At(i).ID; id != fmt.Sprintf("e%03d", tc.first+i) {
				t.Fatalf("num %d after %d: event %d is %s", tc.num, tc.after, i, id)
			}
		}
	}
}

// TestInterruptedAppend: an append cut short after its event was written
// but before the session item was leaves no trace a reader sees; the
// session appends on, and reads exactly what was appended; Delete leaves
// nothing behind.
func TestInterruptedAppend(t *testing.T) {
	for _, b := range adaptertest.Backends(t, adaptertest.Options{Plaintext: true}) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			w := &writeCounter{Store: b.Store(t)}
			svc, err := adk.NewSessionService(w, adk.Options{})
			if err != nil {
				t.Fatal(err)
			}
			c, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u.1", SessionID: "s1"})
			if err != nil {
				t.Fatal(err)
			}
			if err := svc.AppendEvent(ctx, c.Session, textEvent("e1", "one", map[string]any{"k": 1})); err != nil {
				t.Fatal(err)
			}
			w.failPutIf = true
			if err := svc.AppendEvent(ctx, mustGet(t, svc, "s1"), textEvent("lost", "never stored", map[string]any{"k": "lost"})); err == nil {
				t.Fatal("append with a failing session write succeeded")
			}
			w.failPutIf = false
			got := mustGet(t, svc, "s1")
			if n := got.Events().Len(); n != 1 {
				t.Fatalf("events after the interrupted append = %d, want 1", n)
			}
			if v, _ := got.State().Get("k"); fmt.Sprint(v) != "1" {
				t.Fatalf("state k = %v", v)
			}
			for _, id := range []string{"e2", "e3"} {
				if err := svc.AppendEvent(ctx, got, textEvent(id, id, map[string]any{"k": id})); err != nil {
					t.Fatal(err)
				}
			}
			got = mustGet(t, svc, "s1")
			var ids []string
			for ev := range got.Events().All() {
				ids = append(ids, ev.ID)
			}
			if fmt.Sprint(ids) != "[e1 e2 e3]" {
				t.Fatalf("events = %v, want [e1 e2 e3]", ids)
			}
			if v, _ := got.State().Get("k"); v != "e3" {
				t.Fatalf("state k = %v", v)
			}
			// Delete takes the events with the session, the one no chain
			// names included.
			if err := svc.Delete(ctx, &session.DeleteRequest{AppName: "app", UserID: "u.1", SessionID: "s1"}); err != nil {
				t.Fatal(err)
			}
			left, err := w.ListNamespaces(ctx, store.ListNamespacesOptions{Prefix: store.Namespace{"adk", "app", "sessions"}})
			if err != nil || len(left) != 0 {
				t.Fatalf("after Delete the store holds %v (%v)", left, err)
			}
		})
	}
}

// TestMissingEventIsDamage: an event item removed from the store (by
// someone with write access, not by any append) makes Get fail with
// ErrSessionDamaged instead of returning a shorter history; with
// Options.EventsExpire (a store TTL) the session reads from the oldest
// event still held. A session id whose events' namespace would be over the
// store's limit is refused at Create, not at its first append.
func TestMissingEventIsDamage(t *testing.T) {
	for _, b := range adaptertest.Backends(t, adaptertest.Options{Plaintext: true}) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := b.Store(t)
			svc, err := adk.NewSessionService(st, adk.Options{})
			if err != nil {
				t.Fatal(err)
			}
			c, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u.1", SessionID: "s1"})
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range []string{"e1", "e2", "e3"} {
				if err := svc.AppendEvent(ctx, c.Session, textEvent(id, id, nil)); err != nil {
					t.Fatal(err)
				}
				c.Session = mustGet(t, svc, "s1")
			}
			evNS := store.Namespace{"adk", "app", "sessions", "u%2E1", "s1"}
			items, err := st.(store.Lister).ListItems(ctx, evNS, store.ListItemsOptions{})
			if err != nil || len(items) != 3 {
				t.Fatalf("event items = %d, %v; want 3", len(items), err)
			}
			if err := st.Delete(ctx, evNS, items[1].Key); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u.1", SessionID: "s1"}); !errors.Is(err, adk.ErrSessionDamaged) {
				t.Fatalf("Get of a session missing its 2nd event: %v, want ErrSessionDamaged", err)
			}
			expiring, err := adk.NewSessionService(st, adk.Options{EventsExpire: true})
			if err != nil {
				t.Fatal(err)
			}
			got, err := expiring.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u.1", SessionID: "s1"})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for ev := range got.Session.Events().All() {
				ids = append(ids, ev.ID)
			}
			if fmt.Sprint(ids) != "[e3]" {
				t.Fatalf("events with EventsExpire = %v, want [e3] (the history after the gap)", ids)
			}
			long := strings.Repeat(".", store.MaxIDBytes/3)
			if _, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u.1", SessionID: long}); !errors.Is(err, store.ErrIDTooLong) {
				t.Fatalf("Create with an id whose escaped events namespace is too long: %v, want store.ErrIDTooLong", err)
			}
		})
	}
}

// appendEvents appends n events (event(i) for i from 0) to session id of
// app "app" through svc, as a runner sharing the session with other
// writers does: a stale handle (adk.ErrStaleSession) is read again — the
// newest event is enough — and the append retried. It returns the number
// of retries.
func appendEvents(ctx context.Context, svc *adk.SessionService, user, id string, n int, event func(i int) *session.Event) (retries int, err error) {
	get := func() (session.Session, error) {
		r, err := svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: user, SessionID: id, NumRecentEvents: 1})
		if err != nil {
			return nil, err
		}
		return r.Session, nil
	}
	h, err := get()
	for i := 0; i < n && err == nil; {
		err = svc.AppendEvent(ctx, h, event(i))
		switch {
		case err == nil:
			i++
		case errors.Is(err, adk.ErrStaleSession):
			retries++
			h, err = get()
		}
	}
	return retries, err
}
