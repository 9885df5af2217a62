package durable_test

import (
	"context"
	"errors"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/durable"
	"github.com/memvault/memvault/serde"
)

// TestDeepValueChangedAfterPut: values are copied when queued, however
// deep a serializer stores them (found by review: the copy stopped at 100
// reflect levels, 50 nested maps, and queued the caller's own maps below:
// a state 60 maps deep changed after Put returned was stored changed, and
// with Async the background writer read maps the caller was writing).
func TestDeepValueChangedAfterPut(t *testing.T) {
	ctx := context.Background()
	s := wrap(t, newMem(t), durable.Options{Mode: durable.Exit})
	root := map[string]any{}
	leaf := root
	for range 60 {
		next := map[string]any{}
		leaf["child"] = next
		leaf = next
	}
	leaf["note"] = "as put"
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"state": root},
		ChannelVersions: map[string]string{"state": s.NextVersion("")}}
	if _, err := s.Put(ctx, checkpointer.Config{ThreadID: "t"}, cp, nil, cp.ChannelVersions); err != nil {
		t.Fatal(err)
	}
	leaf["note"] = "changed after Put returned"
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	tp, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "t"})
	if err != nil || tp == nil {
		t.Fatalf("GetTuple: %v, %v", tp, err)
	}
	v := tp.Checkpoint.ChannelValues["state"]
	for range 60 {
		m, _ := v.(map[string]any)
		v = m["child"]
		if v == nil {
			v = m
			break
		}
	}
	if m, _ := v.(map[string]any); m != nil && m["note"] != "as put" {
		t.Fatalf("a value 60 maps deep, changed after Put returned, is stored changed: the leaf reads %q", m["note"])
	}
}

// TestCyclicValueRefused: a cycle in what a queued put copies but no
// serializer reads (the config's Extra) fails the put with
// serde.ErrUnsupportedValue; it neither overflows the stack nor is queued
// by reference.
func TestCyclicValueRefused(t *testing.T) {
	s := wrap(t, newMem(t), durable.Options{Mode: durable.Async})
	loop := map[string]any{}
	loop["self"] = loop
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"a": 1},
		ChannelVersions: map[string]string{"a": s.NextVersion("")}}
	_, err := s.Put(context.Background(), checkpointer.Config{ThreadID: "t", Extra: map[string]any{"loop": loop}}, cp, nil, cp.ChannelVersions)
	if !errors.Is(err, serde.ErrUnsupportedValue) {
		t.Fatalf("Put with a cyclic Extra: %v; want serde.ErrUnsupportedValue", err)
	}
}
