package main

import (
	"context"
	"testing"

	"github.com/cloudwego/eino/compose"

	"github.com/memvault/memvault/adapters/eino"
	"github.com/memvault/memvault/memvaulttest/readmetest"
	"github.com/memvault/memvault/vault"
)

// TestREADMESnippet runs the README's Eino snippet (quoted below, line
// for line) as a deployment would: MEMVAULT_DB and LANGGRAPH_AES_KEY
// exported. The graph stops before "ship", a new handle on the same file
// finishes it, and the files hold none of the run's data in clear.
func TestREADMESnippet(t *testing.T) {
	readmetest.Quoted(t, "../../README.md", "eino.NewCheckPointStore", "readme_test.go", "runREADMESnippet")
	dir := readmetest.Env(t)
	if out := runREADMESnippet(t); out != "" {
		t.Fatalf("the first run finished: %q", out)
	}
	if out := runREADMESnippet(t); out != "parcel 1187 packed, shipped" {
		t.Fatalf("the resumed run gave %q", out)
	}
	readmetest.NoPlaintext(t, dir, "parcel 1187")
}

// runREADMESnippet opens the handle, runs the graph until it stops before
// "ship" (returning "") or to its end, and closes the handle.
func runREADMESnippet(t *testing.T) string {
	ctx := context.Background()
	g := compose.NewGraph[string, string]()
	must(t, g.AddLambdaNode("pack", compose.InvokableLambda(func(_ context.Context, in string) (string, error) { return in + " packed", nil })))
	must(t, g.AddLambdaNode("ship", compose.InvokableLambda(func(_ context.Context, in string) (string, error) { return in + ", shipped", nil })))
	must(t, g.AddEdge(compose.START, "pack"))
	must(t, g.AddEdge("pack", "ship"))
	must(t, g.AddEdge("ship", compose.END))
	h, err := vault.OpenEnv(ctx)
	must(t, err)
	defer h.Close()
	if len(h.KeyIDs()) == 0 {
		t.Fatal("OpenEnv with the key exported does not encrypt")
	}
	cps, _ := eino.NewCheckPointStore(h.Saver, eino.Options{KeepLast: 20})
	run, _ := g.Compile(ctx, compose.WithCheckPointStore(cps), compose.WithInterruptBeforeNodes([]string{"ship"}))

	out, err := run.Invoke(ctx, "parcel 1187", compose.WithCheckPointID("order-1187"))
	if info, ok := compose.ExtractInterruptInfo(err); ok {
		if len(info.BeforeNodes) != 1 || info.BeforeNodes[0] != "ship" {
			t.Fatalf("stopped before %v", info.BeforeNodes)
		}
		return ""
	}
	must(t, err)
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
