package interop_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/memvaulttest/jsrows"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/serde"
)

// graphOutput is what graph.mjs prints.
type graphOutput struct {
	Interrupts []any                `json:"interrupts"`
	Next       []string             `json:"next"`
	Values     map[string]valueView `json:"values"`
	Tuples     []tupleView          `json:"tuples"`
}

// TestJSGraphResumesAfterImport runs a real JS LangGraph StateGraph (a
// subgraph and an interrupt()) on PostgresSaver until it waits for
// approval; memvault reads every checkpoint the graph wrote as JS reads it,
// copies the thread into another schema (integer versions, plain JSONPlus),
// and the JS graph resumes there with Command({resume}) and finishes exactly
// as it does on its own rows. memvault then reads the finished thread.
func TestJSGraphResumesAfterImport(t *testing.T) {
	requireNode(t)
	ctx := context.Background()
	const thread = jsrows.JSRealGraphThread
	srcPool, srcSchema := pgtest.Schema(t)
	var started graphOutput
	runNode(t, &started, "graph.mjs", srcSchema, thread, "start")
	if !slices.Equal(started.Next, []string{"review"}) || len(started.Interrupts) != 1 {
		t.Fatalf("JS graph did not stop at the review interrupt: next %v, interrupts %v", started.Next, started.Interrupts)
	}

	src, err := pgsaver.New(srcPool, pgsaver.Options{Schema: srcSchema})
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	mine := collect(t, src.List(ctx, &checkpointer.Config{ThreadID: thread}, checkpointer.ListOptions{AllNamespaces: true}))
	if len(mine) != len(started.Tuples) {
		t.Fatalf("memvault lists %d checkpoints of the graph's thread, JS %d", len(mine), len(started.Tuples))
	}
	namespaces := map[string]bool{}
	for i := range mine {
		checkTuple(t, mine[i], started.Tuples[i])
		namespaces[mine[i].Config.CheckpointNS] = true
	}
	if len(namespaces) < 2 {
		t.Errorf("the graph's thread has namespaces %v; want the root and the subgraph's", namespaces)
	}
	latest, err := src.GetTuple(ctx, checkpointer.Config{ThreadID: thread})
	if err != nil || latest == nil {
		t.Fatalf("latest: %v, %v", latest, err)
	}
	var interrupted bool
	for _, w := range latest.PendingWrites {
		interrupted = interrupted || w.Channel == checkpointer.ChannelInterrupt
	}
	if !interrupted {
		t.Errorf("memvault sees no __interrupt__ write on the interrupted checkpoint: %+v", latest.PendingWrites)
	}

	dstPool, dstSchema := pgtest.Schema(t)
	dst, err := pgsaver.New(dstPool, pgsaver.Options{Schema: dstSchema, Serde: serde.JSONPlus{}, VersionStyle: checkpointer.VersionInt})
	if err != nil {
		t.Fatal(err)
	}
	if err := dst.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	copyThread(t, src, dst, thread)

	// The JS graph resumes on its own rows and on memvault's copy alike.
	var onOriginal, onCopy graphOutput
	runNode(t, &onOriginal, "graph.mjs", srcSchema, thread, "resume")
	runNode(t, &onCopy, "graph.mjs", dstSchema, thread, "resume")
	if len(onCopy.Next) != 0 || len(onCopy.Interrupts) != 0 {
		t.Fatalf("JS graph on the copy did not finish: next %v, interrupts %v", onCopy.Next, onCopy.Interrupts)
	}
	const epoch = "1970-01-01T00:00:00Z"
	var a, b tupleView
	a.Checkpoint.TS, b.Checkpoint.TS = epoch, epoch
	a.ChannelValues, b.ChannelValues = onCopy.Values, onOriginal.Values
	checkSameJSView(t, "final state", a, b)
	if !slices.Equal(sortedKeys(onCopy.Values), sortedKeys(onOriginal.Values)) {
		t.Errorf("final state channels on the copy %v, on the original %v", sortedKeys(onCopy.Values), sortedKeys(onOriginal.Values))
	}
	if got := string(onCopy.Values["approved"].JSON); got != "true" {
		t.Errorf("approved = %s, want true", got)
	}

	// memvault reads the finished thread as JS does.
	final := collect(t, dst.List(ctx, &checkpointer.Config{ThreadID: thread}, checkpointer.ListOptions{AllNamespaces: true}))
	if len(final) != len(onCopy.Tuples) {
		t.Fatalf("memvault lists %d checkpoints after the resume, JS %d", len(final), len(onCopy.Tuples))
	}
	for i := range final {
		checkTuple(t, final[i], onCopy.Tuples[i])
	}
	if msgs, _ := final[0].Checkpoint.ChannelValues["messages"].([]any); len(msgs) != 4 {
		t.Errorf("final messages = %s", fmt.Sprint(final[0].Checkpoint.ChannelValues["messages"]))
	}
}
