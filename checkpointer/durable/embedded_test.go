package durable_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/durable"
)

// history is unexported and embedded in agentState: its exported fields
// are promoted, and the serializer stores them as agentState's own.
type history struct {
	Messages []string
	Seen     map[string]int
	inner
}

// inner is embedded one level deeper.
type inner struct{ Notes []string }

type agentState struct {
	history
	Step int
}

// TestEmbeddedUnexportedStructCopied: a value whose exported fields are
// promoted from an embedded struct of an unexported type (a common way to
// compose state types) is stored by a queued put as a synchronous put of
// it stored it when Put returned (found by review: the copy kept such a
// struct by reference, so its slices and maps were shared with the
// caller, and a change after Put was stored).
func TestEmbeddedUnexportedStructCopied(t *testing.T) {
	ctx := context.Background()
	s := wrap(t, newSQLite(t, ""), durable.Options{Mode: durable.Exit})
	st := &agentState{history: history{Messages: []string{"hello"}, Seen: map[string]int{"hello": 1}, inner: inner{Notes: []string{"n"}}}, Step: 1}
	put := func(sv checkpointer.Saver, thread string) {
		t.Helper()
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"state": st},
			ChannelVersions: map[string]string{"state": sv.NextVersion("")}}
		if _, err := sv.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, nil, cp.ChannelVersions); err != nil {
			t.Fatal(err)
		}
	}
	read := func(thread string) string {
		t.Helper()
		tp, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: thread})
		if err != nil || tp == nil {
			t.Fatalf("GetTuple(%s): %v, %v", thread, tp, err)
		}
		return fmt.Sprint(tp.Checkpoint.ChannelValues["state"])
	}
	put(s.Inner(), "sync")
	put(s, "queued")
	// The caller goes on with its state after Put returned.
	st.Messages[0] = "changed after Put returned"
	st.Seen["hello"] = 99
	st.Notes[0] = "changed"
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := read("queued"), read("sync"); got != want {
		t.Fatalf("a state with fields promoted from embedded structs of unexported types, changed after a queued Put returned, is stored as\n%s\nwhere a synchronous put stores\n%s", got, want)
	}
}
