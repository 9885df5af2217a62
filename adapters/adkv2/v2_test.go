package adkv2_test

import (
	"reflect"
	"testing"
	"time"

	"google.golang.org/adk/v2/session"

	"github.com/memvault/memvault/adapters/adkv2"
	"github.com/memvault/memvault/memvaulttest/adaptertest"
)

// TestV2EventFieldsKept: the event fields ADK v2 added for workflows
// (isolation scope, routes, requested input, output, node info) come back
// from every store as they were appended, encrypted where the store is.
func TestV2EventFieldsKept(t *testing.T) {
	for _, b := range adaptertest.Backends(t, adaptertest.Options{}) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			svc, err := adkv2.NewSessionService(b.Store(t), adkv2.Options{})
			if err != nil {
				t.Fatal(err)
			}
			c, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"})
			if err != nil {
				t.Fatal(err)
			}
			ev := &session.Event{
				ID:             "e1",
				Author:         "approver",
				Timestamp:      time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC),
				IsolationScope: "refunds",
				Routes:         []string{"approve", "notify"},
				RequestedInput: &session.RequestInput{InterruptID: "manager_approval-1", Message: "Approve the refund?", Payload: map[string]any{"amount": "120.50"}},
				Output:         map[string]any{"decision": "pending"},
				NodeInfo:       &session.NodeInfo{Path: "refund/approve@1", MessageAsOutput: true, OutputFor: []string{"refund"}},
			}
			if err := svc.AppendEvent(ctx, c.Session, ev); err != nil {
				t.Fatal(err)
			}
			got, err := svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"})
			if err != nil {
				t.Fatal(err)
			}
			back := got.Session.Events().At(0)
			if back == nil {
				t.Fatal("event not stored")
			}
			if back.IsolationScope != ev.IsolationScope || !reflect.DeepEqual(back.Routes, ev.Routes) ||
				!reflect.DeepEqual(back.RequestedInput, ev.RequestedInput) || !reflect.DeepEqual(back.Output, ev.Output) ||
				!reflect.DeepEqual(back.NodeInfo, ev.NodeInfo) || !back.Timestamp.Equal(ev.Timestamp) {
				t.Fatalf("event changed in storage:\n got %+v\nwant %+v", back, ev)
			}
		})
	}
}
