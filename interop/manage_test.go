package interop_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/memvaulttest/jsrows"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// TestMemvaultManagesJSThreads: memvault's CopyThread and Prune (which JS
// LangGraph lacks) on threads JS wrote leave rows JS reads as before: the
// copy reads like the original, and the pruned thread keeps the latest
// checkpoint of each namespace with all its values (including those written
// by the checkpoints pruned away) and pending writes, and JS continues it.
func TestMemvaultManagesJSThreads(t *testing.T) {
	requireNode(t)
	ctx := context.Background()
	pool, schema := pgtest.Schema(t)
	var out writeOutput
	runNode(t, &out, "write.mjs", schema)
	s, err := pgsaver.New(pool, pgsaver.Options{Schema: schema, VersionStyle: checkpointer.VersionInt})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	original := out.Tuples[jsrows.JSGraphThread]
	ids := out.Threads[jsrows.JSGraphThread]

	const copyID = "js-graph-copy"
	if err := s.CopyThread(ctx, jsrows.JSGraphThread, copyID); err != nil {
		t.Fatal(err)
	}
	var copied readOutput
	runNode(t, &copied, "read.mjs", schema, copyID)
	if len(copied.Tuples) != len(original) {
		t.Fatalf("JS lists %d checkpoints in the copy, %d in the original", len(copied.Tuples), len(original))
	}
	for i, want := range original {
		want.Config.ThreadID = copyID
		checkSameJSView(t, fmt.Sprintf("copy tuple %d", i), copied.Tuples[i], want)
	}

	if err := s.Prune(ctx, []string{jsrows.JSGraphThread}, checkpointer.PruneKeepLatest); err != nil {
		t.Fatal(err)
	}
	var pruned readOutput
	runNode(t, &pruned, "read.mjs", schema, jsrows.JSGraphThread, "--continue")
	var kept []tupleView
	for _, tv := range original {
		if id := tv.Config.CheckpointID; id == ids["step1"] || id == ids["child"] {
			kept = append(kept, tv)
		}
	}
	if len(pruned.Tuples) != len(kept) {
		t.Fatalf("JS lists %d checkpoints after Prune, want %d (the latest of each namespace)", len(pruned.Tuples), len(kept))
	}
	for i := range kept {
		checkSameJSView(t, fmt.Sprintf("pruned tuple %d", i), pruned.Tuples[i], kept[i])
	}
	if pruned.Continued == nil {
		t.Fatal("JS did not continue the pruned thread")
	}
	latest, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: jsrows.JSGraphThread})
	if err != nil {
		t.Fatal(err)
	}
	checkTuple(t, latest, pruned.Continued.Tuple)
}

// TestPruneKeepsLegacyPendingSends: the pending sends of a v<4 checkpoint
// live in its parent's __pregel_tasks writes (reference §1.4). Pruning a
// thread down to its latest checkpoint must not lose them: they are the
// Send tasks the next step runs. Offline: the rows come from the fixture.
func TestPruneKeepsLegacyPendingSends(t *testing.T) {
	ctx := context.Background()
	pool, schema := pgtest.Schema(t)
	if err := jsrows.Exec(ctx, pool, jsrows.JSRowsSQL); err != nil {
		t.Fatal(err)
	}
	s, err := pgsaver.New(pool, pgsaver.Options{Schema: schema, VersionStyle: checkpointer.VersionInt})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	before := mustGet(t, s, checkpointer.Config{ThreadID: jsrows.JSSendsThread})
	sends := before.Checkpoint.ChannelValues[checkpointer.ChannelTasks]
	if l, _ := sends.([]any); len(l) != 3 {
		t.Fatalf("pending sends before Prune = %#v, want 3", sends)
	}
	if err := s.Prune(ctx, []string{jsrows.JSSendsThread}, checkpointer.PruneKeepLatest); err != nil {
		t.Fatal(err)
	}
	after := mustGet(t, s, checkpointer.Config{ThreadID: jsrows.JSSendsThread})
	if after.Config.CheckpointID != before.Config.CheckpointID {
		t.Fatalf("Prune kept %s, want the latest %s", after.Config.CheckpointID, before.Config.CheckpointID)
	}
	if got := after.Checkpoint.ChannelValues[checkpointer.ChannelTasks]; fmt.Sprint(got) != fmt.Sprint(sends) {
		t.Errorf("pending sends of the v1 checkpoint after Prune(keep latest) = %#v, want %#v: Prune deleted the parent's %s writes they are read from", got, sends, checkpointer.ChannelTasks)
	}
}
