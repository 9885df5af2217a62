package adk_test

import (
	"context"
	"fmt"

	"google.golang.org/adk/session"

	"github.com/memvault/memvault/adapters/adk"
	"github.com/memvault/memvault/store/memstore"
)

// An ADK session service on a memvault store: app and user state are
// shared as ADK scopes them, temporary state is not stored.
func Example() {
	ctx := context.Background()
	st, _ := memstore.New(memstore.Options{}) // sqlitestore.Open or pgstore.New in production
	defer st.Close()
	sessions, err := adk.NewSessionService(st, adk.Options{})
	if err != nil {
		panic(err)
	}
	c, _ := sessions.Create(ctx, &session.CreateRequest{AppName: "desk", UserID: "carol", SessionID: "t1"})
	_ = sessions.AppendEvent(ctx, c.Session, &session.Event{ID: "e1", Author: "user", Actions: session.EventActions{
		StateDelta: map[string]any{"user:lang": "fr", "temp:draft": "…", "topic": "refund"},
	}})

	other, _ := sessions.Create(ctx, &session.CreateRequest{AppName: "desk", UserID: "carol", SessionID: "t2"})
	lang, _ := other.Session.State().Get("user:lang")
	got, _ := sessions.Get(ctx, &session.GetRequest{AppName: "desk", UserID: "carol", SessionID: "t1"})
	_, errTemp := got.Session.State().Get("temp:draft")
	topic, _ := got.Session.State().Get("topic")
	fmt.Println(lang, topic, errTemp == session.ErrStateKeyNotExist, got.Session.Events().Len())
	// Output: fr refund true 1
}
