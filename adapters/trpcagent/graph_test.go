package trpcagent_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"trpc.group/trpc-go/trpc-agent-go/agent"
	"trpc.group/trpc-go/trpc-agent-go/event"
	"trpc.group/trpc-go/trpc-agent-go/graph"

	"github.com/memvault/memvault/adapters/trpcagent"
	"github.com/memvault/memvault/memvaulttest/adaptertest"
)

// approvalGraph is entry -> ask -> done, where ask interrupts for a human's
// answer (graph.Interrupt) and stores it in the state.
func approvalGraph(t *testing.T) *graph.Graph {
	t.Helper()
	sg := graph.NewStateGraph(graph.NewStateSchema())
	sg.AddNode("entry", func(context.Context, graph.State) (any, error) { return graph.State{"order": "1187"}, nil })
	sg.AddNode("ask", func(ctx context.Context, st graph.State) (any, error) {
		v, err := graph.Interrupt(ctx, st, "approve", "refund order 1187?")
		if err != nil {
			return nil, err
		}
		return graph.State{"answer": v}, nil
	})
	sg.AddNode("done", func(context.Context, graph.State) (any, error) { return graph.State{"status": "refunded"}, nil })
	sg.SetEntryPoint("entry")
	sg.AddEdge("entry", "ask")
	sg.AddEdge("ask", "done")
	sg.SetFinishPoint("done")
	g, err := sg.Compile()
	must(t, err)
	return g
}

// drain reads a run's events until the channel closes, returning the
// interrupt's step metadata (if any) and the final state (if it completed).
func drain(t *testing.T, evts <-chan *event.Event) (interrupt *graph.PregelStepMetadata, final map[string]any) {
	t.Helper()
	// Minutes, not seconds: a whole graph run, its checkpoints written
	// encrypted, under -race on a loaded machine; it only bounds a hang.
	timeout := time.After(5 * time.Minute)
	for {
		select {
		case e, ok := <-evts:
			if !ok {
				return interrupt, final
			}
			if e == nil {
				continue
			}
			if e.Object == graph.ObjectTypeGraphPregelStep && e.StateDelta != nil {
				var m graph.PregelStepMetadata
				if raw := e.StateDelta[graph.MetadataKeyPregel]; len(raw) > 0 && json.Unmarshal(raw, &m) == nil && m.NodeID != "" && m.InterruptValue != nil {
					interrupt = &m
				}
			}
			if e.Response != nil && e.Response.Done && e.StateDelta != nil {
				final = map[string]any{}
				for k, raw := range e.StateDelta {
					var v any
					if len(k) > 0 && k[0] != '_' && json.Unmarshal(raw, &v) == nil {
						final[k] = v
					}
				}
			}
		case <-timeout:
			t.Fatal("the run did not end")
		}
	}
}

// TestGraphInterruptResumeAcrossRestart: a tRPC-Agent-Go graph interrupts
// for a human; its process stops; a new saver on the same database
// (encrypted SQLite, and PostgreSQL) resumes it to completion.
func TestGraphInterruptResumeAcrossRestart(t *testing.T) {
	ctx := context.Background()
	for _, b := range adaptertest.Backends(t, adaptertest.Options{})[1:] { // the SQL ones
		open, name := b.Saver, b.Name
		t.Run(name, func(t *testing.T) {
			run := func(state graph.State, id string) (*graph.PregelStepMetadata, map[string]any) {
				saver, err := trpcagent.New(open(t))
				must(t, err)
				exec, err := graph.NewExecutor(approvalGraph(t), graph.WithCheckpointSaver(saver))
				must(t, err)
				evts, err := exec.Execute(ctx, state, &agent.Invocation{InvocationID: id})
				must(t, err)
				return drain(t, evts)
			}
			// Process 1: runs until the interrupt.
			intr, final := run(graph.State{}, "first")
			if intr == nil || intr.NodeID != "ask" || intr.LineageID == "" || intr.CheckpointID == "" {
				t.Fatalf("want an interrupt in ask, got %+v (final %v)", intr, final)
			}
			// Process 2: a new saver on the same database resumes it.
			resume := (&graph.ResumeCommand{}).WithResumeMap(map[string]any{"approve": "yes"})
			_, final = run(graph.State{
				graph.CfgKeyLineageID:    intr.LineageID,
				graph.CfgKeyCheckpointID: intr.CheckpointID,
				graph.StateKeyCommand:    resume,
			}, "second")
			if final["answer"] != "yes" || final["status"] != "refunded" || final["order"] != "1187" {
				t.Fatalf("resumed run's final state %v", final)
			}
		})
	}
}
