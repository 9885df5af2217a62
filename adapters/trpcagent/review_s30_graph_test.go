package trpcagent_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"trpc.group/trpc-go/trpc-agent-go/agent"
	"trpc.group/trpc-go/trpc-agent-go/graph"

	"github.com/memvault/memvault/adapters/trpcagent"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/memvaulttest/adaptertest"
)

// TestReviewS30PausedGraphStateSealed attacks "Sealed with a key:
// checkpoints, writes, …" with tRPC's own pause button
// (graph.WithGraphInterrupt): when a run is paused, tRPC saves the input
// state of each node it will run next in the checkpoint's metadata
// (Extra["graph_interrupt_inputs"]), which the adapter kept as memvault's
// plaintext, filterable metadata — before, the graph's whole state (here a
// diagnosis) stood in the clear in the database, on every backend. Now
// that entry is sealed with the checkpoint (a channel of its own), the
// plaintext metadata holds none of it, and the paused run resumes from a
// new process with its state.
func TestReviewS30PausedGraphStateSealed(t *testing.T) {
	const secret = "diagnosis-type-2-diabetes-s30"
	for _, b := range adaptertest.Backends(t, adaptertest.Options{}) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			build := func(pause func(...graph.GraphInterruptOption)) *graph.Graph {
				sg := graph.NewStateGraph(graph.NewStateSchema())
				sg.AddNode("intake", func(context.Context, graph.State) (any, error) {
					if pause != nil {
						pause() // the operator pauses the run: before the next step
					}
					return graph.State{"note": secret}, nil
				})
				sg.AddNode("triage", func(_ context.Context, st graph.State) (any, error) {
					return graph.State{"status": fmt.Sprint("triaged ", st["note"])}, nil
				})
				sg.SetEntryPoint("intake")
				sg.AddEdge("intake", "triage")
				sg.SetFinishPoint("triage")
				g, err := sg.Compile()
				must(t, err)
				return g
			}
			saver, err := trpcagent.New(b.Saver(t))
			must(t, err)
			runCtx, pause := graph.WithGraphInterrupt(ctx)
			exec, err := graph.NewExecutor(build(pause), graph.WithCheckpointSaver(saver))
			must(t, err)
			const lineage = "patient-7"
			evts, err := exec.Execute(runCtx, graph.State{graph.CfgKeyLineageID: lineage}, &agent.Invocation{InvocationID: "first"})
			must(t, err)
			if _, final := drain(t, evts); final["status"] != nil {
				t.Fatalf("the paused run finished: %v", final)
			}

			// What the database holds in plaintext: every checkpoint's
			// metadata (memvault's, as stored), and SQLite's raw files.
			paused := ""
			for tp, err := range b.Saver(t).List(ctx, &checkpointer.Config{ThreadID: lineage}, checkpointer.ListOptions{}) {
				must(t, err)
				if strings.Contains(fmt.Sprint(tp.Metadata), secret) {
					t.Errorf("checkpoint %s's plaintext metadata holds the graph's state: %v", tp.Config.CheckpointID, tp.Metadata)
				}
				if paused == "" {
					paused = tp.Config.CheckpointID
				}
			}
			if paused == "" {
				t.Fatal("no checkpoint saved")
			}
			for _, f := range b.Files {
				raw, err := os.ReadFile(f)
				if err == nil && bytes.Contains(raw, []byte(secret)) && strings.Contains(b.Name, "encrypted") {
					t.Errorf("%s holds the graph's state in plaintext", f)
				}
			}

			// tRPC still gets its inputs back: the latest checkpoint's
			// metadata names them, and a new process resumes the run.
			latest, err := saver.GetTuple(ctx, graph.CreateCheckpointConfig(lineage, "", ""))
			must(t, err)
			if latest == nil || latest.Metadata == nil || latest.Metadata.Extra[graph.CheckpointMetaKeyGraphInterruptInputs] == nil {
				t.Fatalf("the paused checkpoint lost tRPC's interrupt inputs: %+v", latest)
			}
			saver2, err := trpcagent.New(b.Saver(t))
			must(t, err)
			exec2, err := graph.NewExecutor(build(nil), graph.WithCheckpointSaver(saver2))
			must(t, err)
			evts, err = exec2.Execute(ctx, graph.State{
				graph.CfgKeyLineageID:    lineage,
				graph.CfgKeyCheckpointID: latest.Checkpoint.ID,
			}, &agent.Invocation{InvocationID: "second"})
			must(t, err)
			if _, final := drain(t, evts); final["status"] != "triaged "+secret {
				t.Fatalf("the resumed run's final state: %v", final)
			}
		})
	}
}
