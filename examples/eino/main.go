// Command eino runs a CloudWeGo Eino graph whose checkpoints live in
// memvault (an encrypted SQLite file on the embedded default). A refund
// node stops the run to ask a human (compose.Interrupt); the process ends;
// a new process on the same file resumes the run with the human's answer
// and finishes it, and the run's checkpoint history is still there.
//
// Run it from the repository root:
//
//	make example-eino
//
// The database goes to a temporary directory, or to MEMVAULT_DB when that is
// set (the file is then kept). With LANGGRAPH_AES_KEY unset a demo key is
// used, so that the file is encrypted either way.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/memvault/memvault/examples/demoenv"

	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	memvaulteino "github.com/memvault/memvault/adapters/eino"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/vault"
)

func main() { demoenv.Main("eino.db", demo) }

// demo runs the two "processes" on the database file at path.
func demo(ctx context.Context, w io.Writer, path string) error {
	cfg := demoenv.Config(path) // SQLite, offline embedder, encrypted
	fmt.Fprintln(w, "process 1:")
	interruptID, err := step(ctx, w, cfg, "")
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "process 2 (same file, new handles):")
	_, err = step(ctx, w, cfg, interruptID)
	return err
}

// step opens memvault as a fresh process would and runs (resume empty) or
// resumes the refund run, returning the id of the interrupt it stopped at.
func step(ctx context.Context, w io.Writer, cfg config.Config, resume string) (string, error) {
	h, err := vault.Open(ctx, cfg)
	if err != nil {
		return "", fmt.Errorf("open: %w", err)
	}
	defer h.Close()
	// The line an Eino program adds: checkpoints in memvault.
	cps, err := memvaulteino.NewCheckPointStore(h.Saver, memvaulteino.Options{KeepLast: 10})
	if err != nil {
		return "", err
	}
	run, err := refundGraph(ctx, cps)
	if err != nil {
		return "", err
	}
	if resume != "" {
		ctx = compose.ResumeWithData(ctx, resume, "approved by Dana")
	}
	out, err := run.Invoke(ctx, "refund 49.90 EUR for order 1187", compose.WithCheckPointID("refund-1187"))
	if info, ok := compose.ExtractInterruptInfo(err); ok {
		fmt.Fprintf(w, "  stopped: %v\n", info.InterruptContexts[0].Info)
		return info.InterruptContexts[0].ID, nil
	}
	if err != nil {
		return "", err
	}
	hist, err := cps.History(ctx, "refund-1187")
	if err != nil {
		return "", err
	}
	fmt.Fprintf(w, "  done: %s\n  checkpoints kept: %d\n", out, len(hist))
	return "", nil
}

// refundState is the graph's state, kept in every checkpoint: the order a
// resumed refund works on.
type refundState struct{ Order string }

func init() { schema.Register[refundState]() }

// refundGraph is check -> refund, where refund asks a human first. Eino
// runs an interrupted node again on resume without its input, so "check"
// keeps the order in graph state and "refund" takes it from there.
func refundGraph(ctx context.Context, cps compose.CheckPointStore) (compose.Runnable[string, string], error) {
	g := compose.NewGraph[string, string](compose.WithGenLocalState(func(context.Context) *refundState { return &refundState{} }))
	err := errors.Join(
		g.AddLambdaNode("check", compose.InvokableLambda(func(_ context.Context, in string) (string, error) {
			return in + " [checked]", nil
		}), compose.WithStatePostHandler(func(_ context.Context, out string, st *refundState) (string, error) {
			st.Order = out
			return out, nil
		})),
		g.AddLambdaNode("refund", compose.InvokableLambda(func(ctx context.Context, in string) (string, error) {
			resumed, hasAnswer, answer := compose.GetResumeContext[string](ctx)
			if !resumed || !hasAnswer {
				return "", compose.Interrupt(ctx, "a refund needs a human's approval")
			}
			return in + " [refund sent, " + answer + "]", nil
		}), compose.WithStatePreHandler(func(_ context.Context, _ string, st *refundState) (string, error) {
			return st.Order, nil
		})),
		g.AddEdge(compose.START, "check"),
		g.AddEdge("check", "refund"),
		g.AddEdge("refund", compose.END),
	)
	if err != nil {
		return nil, err
	}
	return g.Compile(ctx, compose.WithCheckPointStore(cps), compose.WithGraphName("refunds"))
}
