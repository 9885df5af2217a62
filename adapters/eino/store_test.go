package eino_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/memvault/memvault/adapters/eino"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/memvaulttest/adaptertest"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

type approval struct{ Approved bool }

func init() { schema.Register[approval]() }

// graph is a two-step Eino graph that stops for approval before "ship".
func graph(t *testing.T, store compose.CheckPointStore) compose.Runnable[string, string] {
	t.Helper()
	g := compose.NewGraph[string, string](compose.WithGenLocalState(func(context.Context) *approval { return &approval{} }))
	must(t, g.AddLambdaNode("draft", compose.InvokableLambda(func(_ context.Context, in string) (string, error) {
		return in + " -> drafted", nil
	})))
	must(t, g.AddLambdaNode("ship", compose.InvokableLambda(func(_ context.Context, in string) (string, error) {
		return in + " -> shipped", nil
	}), compose.WithStatePreHandler(func(_ context.Context, in string, st *approval) (string, error) {
		if st.Approved {
			return in + " (approved)", nil
		}
		return in, nil
	})))
	must(t, g.AddEdge(compose.START, "draft"))
	must(t, g.AddEdge("draft", "ship"))
	must(t, g.AddEdge("ship", compose.END))
	r, err := g.Compile(context.Background(), compose.WithCheckPointStore(store), compose.WithInterruptBeforeNodes([]string{"ship"}), compose.WithGraphName("order"))
	must(t, err)
	return r
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestInterruptResumeAcrossRestart: a real Eino graph interrupts before a
// node; its process stops; a new saver on the same database (encrypted)
// resumes the run to completion. The history of the id's checkpoints is
// kept and can be restored, KeepLast bounds it, and Delete removes it.
func TestInterruptResumeAcrossRestart(t *testing.T) {
	ctx := context.Background()
	for _, b := range adaptertest.Backends(t, adaptertest.Options{})[1:] { // the SQL ones, encrypted
		open := b.Saver
		t.Run(b.Name, func(t *testing.T) {
			// Process 1: runs until the interrupt, then stops.
			store1, err := eino.NewCheckPointStore(open(t), eino.Options{})
			must(t, err)
			_, err = graph(t, store1).Invoke(ctx, "order 1187", compose.WithCheckPointID("run-1"))
			info, ok := compose.ExtractInterruptInfo(err)
			if !ok {
				t.Fatalf("want an interrupt, got %v", err)
			}
			if len(info.BeforeNodes) != 1 || info.BeforeNodes[0] != "ship" {
				t.Fatalf("interrupt before %v", info.BeforeNodes)
			}

			// Process 2: a new saver and store on the same database resume it.
			store2, err := eino.NewCheckPointStore(open(t), eino.Options{})
			must(t, err)
			rctx := compose.ResumeWithData(ctx, info.InterruptContexts[0].ID, &approval{Approved: true})
			out, err := graph(t, store2).Invoke(rctx, "order 1187", compose.WithCheckPointID("run-1"))
			must(t, err)
			if out != "order 1187 -> drafted (approved) -> shipped" {
				t.Fatalf("resumed output %q", out)
			}
			hist, err := store2.History(ctx, "run-1")
			must(t, err)
			if len(hist) != 1 {
				t.Fatalf("history of %d checkpoints, want the interrupt's", len(hist))
			}

			// Time travel: after a later checkpoint, the interrupt's is made
			// current again, and the history keeps all three.
			must(t, store2.Set(ctx, "run-1", []byte("later")))
			must(t, store2.Restore(ctx, "run-1", hist[0].CheckpointID))
			got, ok, err := store2.Get(ctx, "run-1")
			must(t, err)
			if !ok || string(got) != string(hist[0].Data) {
				t.Fatal("restored checkpoint is not the latest")
			}
			if h, _ := store2.History(ctx, "run-1"); len(h) != 3 || string(h[1].Data) != "later" {
				t.Fatalf("history after restore: %d checkpoints", len(h))
			}

			// KeepLast bounds the history; Delete removes it.
			kept, err := eino.NewCheckPointStore(open(t), eino.Options{KeepLast: 1})
			must(t, err)
			must(t, kept.Set(ctx, "run-1", []byte("x")))
			if hist, _ := kept.History(ctx, "run-1"); len(hist) != 1 || string(hist[0].Data) != "x" {
				t.Fatalf("after KeepLast 1: %d checkpoints", len(hist))
			}
			must(t, kept.Delete(ctx, "run-1"))
			if _, ok, err := kept.Get(ctx, "run-1"); ok || err != nil {
				t.Fatalf("after Delete: %v %v", ok, err)
			}
		})
	}
}

// idAt is a UUIDv6 checkpoint id of time at, as checkpointer.NewID makes
// them, for checkpoints written "in the past".
func idAt(at time.Time, n int) string {
	ts := uint64(at.UnixNano()/100) + 0x01B21DD213814000
	hi := (ts >> 12) & 0xFFFFFFFFFFFF
	v := hi<<16 | 0x6000 | ts&0x0FFF
	return fmt.Sprintf("%08x-%04x-%04x-8000-%012x", v>>32, (v>>16)&0xFFFF, v&0xFFFF, n)
}

// TestSweepIdle: Sweep deletes the Eino runs idle longer than IdleTTL and
// keeps fresh ones and threads that are not Eino's, on every saver.
func TestSweepIdle(t *testing.T) {
	ctx := context.Background()
	for _, b := range adaptertest.Backends(t, adaptertest.Options{}) {
		open, name := b.Saver, b.Name
		t.Run(name, func(t *testing.T) {
			saver := open(t)
			st, err := eino.NewCheckPointStore(saver, eino.Options{IdleTTL: time.Hour})
			must(t, err)
			old := time.Now().Add(-2 * time.Hour)
			put := func(thread, ns string, n int) {
				cp := &checkpointer.Checkpoint{V: 4, ID: idAt(old, n), TS: old,
					ChannelValues: map[string]any{"eino": []byte("stale")}, ChannelVersions: map[string]string{"eino": saver.NextVersion("")}}
				_, err := saver.Put(ctx, checkpointer.Config{ThreadID: thread, CheckpointNS: ns}, cp, checkpointer.Metadata{"step": 0}, cp.ChannelVersions)
				must(t, err)
			}
			put(name+"-abandoned", "eino", 1)
			put(name+"-langgraph", "", 2) // old, but not Eino's
			must(t, st.Set(ctx, name+"-live", []byte("fresh")))

			n, err := st.Sweep(ctx)
			must(t, err)
			if n != 1 {
				t.Fatalf("swept %d ids, want 1", n)
			}
			if _, ok, _ := st.Get(ctx, name+"-abandoned"); ok {
				t.Fatal("the idle run survived the sweep")
			}
			if _, ok, _ := st.Get(ctx, name+"-live"); !ok {
				t.Fatal("the live run was swept")
			}
			if tup, _ := saver.GetTuple(ctx, checkpointer.Config{ThreadID: name + "-langgraph"}); tup == nil {
				t.Fatal("a thread that is not Eino's was swept")
			}
			if _, err := eino.NewCheckPointStore(saver, eino.Options{IdleTTL: -time.Second}); err == nil {
				t.Fatal("a negative IdleTTL was accepted")
			}
		})
	}
}
