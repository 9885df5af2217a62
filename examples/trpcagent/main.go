// Command trpcagent runs a tRPC-Agent-Go graph whose checkpoints live in
// memvault (an encrypted SQLite file on the embedded default). A node stops
// the run to ask a human (graph.Interrupt); the process ends; a new process
// on the same file resumes the run with the human's answer and finishes it.
//
// Run it from the repository root:
//
//	make example-trpcagent
//
// The database goes to a temporary directory, or to MEMVAULT_DB when that is
// set (the file is then kept). With LANGGRAPH_AES_KEY unset a demo key is
// used, so that the file is encrypted either way.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"trpc.group/trpc-go/trpc-agent-go/agent"
	"trpc.group/trpc-go/trpc-agent-go/graph"

	"github.com/memvault/memvault/adapters/trpcagent"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/examples/demoenv"
	"github.com/memvault/memvault/vault"
)

func main() { demoenv.Main("trpc.db", demo) }

// demo runs the two "processes" on the database file at path.
func demo(ctx context.Context, w io.Writer, path string) error {
	cfg := demoenv.Config(path) // SQLite, offline embedder, encrypted
	fmt.Fprintln(w, "process 1:")
	stop, _, err := step(ctx, cfg, graph.State{"order": "order 1187, 49.90 EUR"})
	if err != nil {
		return err
	}
	if stop == nil {
		return fmt.Errorf("the run did not stop for approval")
	}
	fmt.Fprintf(w, "  stopped in %s: %v\n", stop.NodeID, stop.InterruptValue)
	fmt.Fprintln(w, "process 2 (same file, new handles):")
	_, final, err := step(ctx, cfg, graph.State{
		graph.CfgKeyLineageID:    stop.LineageID,
		graph.CfgKeyCheckpointID: stop.CheckpointID,
		graph.StateKeyCommand:    (&graph.ResumeCommand{}).WithResumeMap(map[string]any{"approve": "approved by Dana"}),
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  done: %v, %v, %v\n", final["order"], final["answer"], final["status"])
	return nil
}

// step opens memvault as a fresh process would and runs the graph from
// state until it stops or ends.
func step(ctx context.Context, cfg config.Config, state graph.State) (*graph.PregelStepMetadata, map[string]any, error) {
	h, err := vault.Open(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("open: %w", err)
	}
	defer h.Close()
	// The line a tRPC-Agent-Go program adds: checkpoints in memvault.
	saver, err := trpcagent.New(h.Saver)
	if err != nil {
		return nil, nil, err
	}
	g, err := refundGraph()
	if err != nil {
		return nil, nil, err
	}
	exec, err := graph.NewExecutor(g, graph.WithCheckpointSaver(saver))
	if err != nil {
		return nil, nil, err
	}
	evts, err := exec.Execute(ctx, state, &agent.Invocation{InvocationID: "refund"})
	if err != nil {
		return nil, nil, err
	}
	var stop *graph.PregelStepMetadata
	var final map[string]any
	for e := range evts {
		if e == nil || e.StateDelta == nil {
			continue
		}
		var m graph.PregelStepMetadata
		if raw := e.StateDelta[graph.MetadataKeyPregel]; len(raw) > 0 && json.Unmarshal(raw, &m) == nil && m.InterruptValue != nil {
			stop = &m
		}
		if e.Response != nil && e.Response.Done {
			final = map[string]any{}
			for k, raw := range e.StateDelta {
				var v any
				if json.Unmarshal(raw, &v) == nil {
					final[k] = v
				}
			}
		}
	}
	return stop, final, nil
}

// refundGraph is check -> approve -> refund; approve waits for a human.
func refundGraph() (*graph.Graph, error) {
	sg := graph.NewStateGraph(graph.NewStateSchema())
	sg.AddNode("check", func(context.Context, graph.State) (any, error) { return graph.State{"checked": true}, nil })
	sg.AddNode("approve", func(ctx context.Context, st graph.State) (any, error) {
		v, err := graph.Interrupt(ctx, st, "approve", "a refund needs a human's approval")
		if err != nil {
			return nil, err
		}
		return graph.State{"answer": v}, nil
	})
	sg.AddNode("refund", func(context.Context, graph.State) (any, error) { return graph.State{"status": "refund sent"}, nil })
	sg.SetEntryPoint("check")
	sg.AddEdge("check", "approve")
	sg.AddEdge("approve", "refund")
	sg.SetFinishPoint("refund")
	return sg.Compile()
}
