package main

import (
	"context"
	"encoding/json"
	"testing"

	"trpc.group/trpc-go/trpc-agent-go/agent"
	"trpc.group/trpc-go/trpc-agent-go/agent/llmagent"
	"trpc.group/trpc-go/trpc-agent-go/graph"
	"trpc.group/trpc-go/trpc-agent-go/memory"
	"trpc.group/trpc-go/trpc-agent-go/model"
	"trpc.group/trpc-go/trpc-agent-go/runner"

	"github.com/memvault/memvault/adapters/trpcagent"
	"github.com/memvault/memvault/memvaulttest/readmetest"
	"github.com/memvault/memvault/vault"
)

// echo is a scripted model (no network): it repeats the last user message.
type echo struct{}

func (echo) Info() model.Info { return model.Info{Name: "echo"} }

func (echo) GenerateContent(_ context.Context, req *model.Request) (<-chan *model.Response, error) {
	said := ""
	for _, m := range req.Messages {
		if m.Role == model.RoleUser {
			said = m.Content
		}
	}
	ch := make(chan *model.Response, 1)
	ch <- &model.Response{Done: true, Object: model.ObjectTypeChatCompletion, Choices: []model.Choice{{Message: model.NewAssistantMessage("noted: " + said)}}}
	close(ch)
	return ch, nil
}

// TestREADMESnippet runs the README's tRPC-Agent-Go snippet (quoted
// below, line for line) as a deployment would: MEMVAULT_DB and
// LANGGRAPH_AES_KEY exported. The graph stops for approval with its state
// checkpointed, a runner's turn is stored in the session, a memory is
// found again, and the files hold none of it in clear.
func TestREADMESnippet(t *testing.T) {
	readmetest.Quoted(t, "../../README.md", "trpcagent.NewSessionService", "readme_test.go", "runREADMESnippet")
	dir := readmetest.Env(t)
	runREADMESnippet(t)
	readmetest.NoPlaintext(t, dir, "49.90 EUR", "parcel 1187", "prefers email")
}

func runREADMESnippet(t *testing.T) {
	ctx := context.Background()
	h, err := vault.OpenEnv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if len(h.KeyIDs()) == 0 {
		t.Fatal("OpenEnv with the key exported does not encrypt")
	}
	g, err := refundGraph()
	if err != nil {
		t.Fatal(err)
	}
	agent := llmagent.New("desk", llmagent.WithModel(echo{}))
	saver, _ := trpcagent.New(h.Saver)
	exec, _ := graph.NewExecutor(g, graph.WithCheckpointSaver(saver))
	sessions, _ := trpcagent.NewSessionService(h.Store, trpcagent.SessionOptions{})
	memories, _ := trpcagent.NewMemoryService(h.Store, trpcagent.MemoryOptions{}) // the store needs an index
	r := runner.NewRunner("desk", agent, runner.WithSessionService(sessions), runner.WithMemoryService(memories))
	defer r.Close()

	if stop := stopsForApproval(t, exec); !stop {
		t.Fatal("the graph did not stop for approval")
	}
	events, err := r.Run(ctx, "carol", "chat-1", model.NewUserMessage("my parcel 1187 is late"))
	if err != nil {
		t.Fatal(err)
	}
	for ev := range events {
		if ev.Error != nil {
			t.Fatal(ev.Error.Message)
		}
	}
	carol := memory.UserKey{AppName: "desk", UserID: "carol"}
	if err := memories.AddMemory(ctx, carol, "carol prefers email", nil); err != nil {
		t.Fatal(err)
	}
	found, err := memories.SearchMemories(ctx, carol, "does carol prefer email or phone")
	if err != nil || len(found) != 1 {
		t.Fatalf("search: %d memories, %v", len(found), err)
	}
}

// stopsForApproval runs the refund graph of main.go on exec and reports
// whether it stopped for approval.
func stopsForApproval(t *testing.T, exec *graph.Executor) bool {
	evts, err := exec.Execute(context.Background(), graph.State{"order": "order 1187, 49.90 EUR"}, &agent.Invocation{InvocationID: "refund"})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	for e := range evts {
		if e == nil || e.StateDelta == nil {
			continue
		}
		var m graph.PregelStepMetadata
		if raw := e.StateDelta[graph.MetadataKeyPregel]; len(raw) > 0 && json.Unmarshal(raw, &m) == nil && m.InterruptValue != nil {
			stopped = true
		}
	}
	return stopped
}
