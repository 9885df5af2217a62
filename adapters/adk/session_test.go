package adk_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/adk/session"
	"google.golang.org/adk/session/sessiontestsuite"

	"github.com/memvault/memvault/adapters/adk"
	"github.com/memvault/memvault/memvaulttest/adaptertest"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/memstore"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestADKSessionSuite runs ADK's own exported session service suite against
// the service on every memvault store, plaintext and encrypted. Each of the
// suite's fresh services gets a namespace prefix of its own on one store.
func TestADKSessionSuite(t *testing.T) {
	for _, opt := range []adaptertest.Options{{Plaintext: true}, {}} {
		for _, b := range adaptertest.Backends(t, opt) {
			if !opt.Plaintext && b.Name == "memory" {
				continue // the memory store holds Go values: nothing to encrypt
			}
			t.Run(b.Name, func(t *testing.T) {
				st := b.Store(t)
				var n atomic.Int64
				sessiontestsuite.RunServiceTests(t, sessiontestsuite.SuiteOptions{SupportsUserProvidedSessionID: true}, func(t *testing.T) session.Service {
					svc, err := adk.NewSessionService(st, adk.Options{Prefix: store.Namespace{"adk", fmt.Sprintf("t%d", n.Add(1))}})
					if err != nil {
						t.Fatal(err)
					}
					return svc
				})
			})
		}
	}
}

// TestStaleHandleRefused: two handles read the same session; the first
// append wins, the second is refused with ErrStaleSession and writes
// nothing, and a fresh handle appends again.
func TestStaleHandleRefused(t *testing.T) {
	for _, b := range adaptertest.Backends(t, adaptertest.Options{Plaintext: true}) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			svc, err := adk.NewSessionService(b.Store(t), adk.Options{})
			if err != nil {
				t.Fatal(err)
			}
			c, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u.1", SessionID: "s1"})
			if err != nil {
				t.Fatal(err)
			}
			other, err := svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u.1", SessionID: "s1"})
			if err != nil {
				t.Fatal(err)
			}
			if err := svc.AppendEvent(ctx, c.Session, &session.Event{ID: "e1", Author: "user"}); err != nil {
				t.Fatal(err)
			}
			err = svc.AppendEvent(ctx, other.Session, &session.Event{ID: "e2", Author: "user", Actions: session.EventActions{StateDelta: map[string]any{"k": "lost"}}})
			if !errors.Is(err, adk.ErrStaleSession) {
				t.Fatalf("stale append: %v, want ErrStaleSession", err)
			}
			got := mustGet(t, svc, "s1")
			if got.Events().Len() != 1 || got.Events().At(0).ID != "e1" {
				t.Fatalf("events after refused append: %d", got.Events().Len())
			}
			if _, err := got.State().Get("k"); !errors.Is(err, session.ErrStateKeyNotExist) {
				t.Fatalf("state of refused append stored: %v", err)
			}
			if err := svc.AppendEvent(ctx, got, &session.Event{ID: "e2", Author: "user"}); err != nil {
				t.Fatalf("append on a fresh handle: %v", err)
			}
			if n := mustGet(t, svc, "s1").Events().Len(); n != 2 {
				t.Fatalf("events = %d, want 2", n)
			}
		})
	}
}

func mustGet(t *testing.T, svc *adk.SessionService, id string) session.Session {
	t.Helper()
	r, err := svc.Get(context.Background(), &session.GetRequest{AppName: "app", UserID: "u.1", SessionID: id})
	if err != nil {
		t.Fatal(err)
	}
	return r.Session
}

// TestMissingSession: Get of a session that does not exist, and
// AppendEvent on a handle whose session was deleted since, are
// ErrSessionNotFound and store nothing.
func TestMissingSession(t *testing.T) {
	for _, b := range adaptertest.Backends(t, adaptertest.Options{Plaintext: true}) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			svc, err := adk.NewSessionService(b.Store(t), adk.Options{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u.1", SessionID: "none"})
			if !errors.Is(err, adk.ErrSessionNotFound) {
				t.Fatalf("Get(missing) = %v, want ErrSessionNotFound", err)
			}
			c, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u.1", SessionID: "s1"})
			if err != nil {
				t.Fatal(err)
			}
			if err := svc.Delete(ctx, &session.DeleteRequest{AppName: "app", UserID: "u.1", SessionID: "s1"}); err != nil {
				t.Fatal(err)
			}
			err = svc.AppendEvent(ctx, c.Session, &session.Event{ID: "e1", Author: "user"})
			if !errors.Is(err, adk.ErrSessionNotFound) {
				t.Fatalf("AppendEvent(deleted) = %v, want ErrSessionNotFound", err)
			}
			if _, err := svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u.1", SessionID: "s1"}); !errors.Is(err, adk.ErrSessionNotFound) {
				t.Fatalf("the refused append recreated the session: %v", err)
			}
		})
	}
}

// TestLongSessionIDNotEchoed: a Get takes a session id of any length (a
// lookup), and ErrSessionNotFound quoted it whole — a 64 KiB request
// field became a 64 KiB error, bound for logs; so did the error of a
// request missing a field, for the fields it had. They name such an id by
// its length and the limit now (checkpointer.NameID).
func TestLongSessionIDNotEchoed(t *testing.T) {
	st, err := memstore.New(memstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc, err := adk.NewSessionService(st, adk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	huge := strings.Repeat("S", 64<<10)
	for name, err := range map[string]error{
		"missing session": func() error {
			_, err := svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: huge})
			return err
		}(),
		"missing field": func() error {
			_, err := svc.Get(ctx, &session.GetRequest{AppName: huge, UserID: "", SessionID: huge})
			return err
		}(),
	} {
		if err == nil {
			t.Fatalf("%s: no error", name)
		}
		msg := err.Error()
		if strings.Contains(msg, huge[:64]) || len(msg) > 1000 || !strings.Contains(msg, strconv.Itoa(len(huge))+" bytes") {
			t.Errorf("%s: the id is not named by its length (%d bytes of error): %.300s", name, len(msg), msg)
		}
	}
}
