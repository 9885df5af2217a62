package eino_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/memvault/memvault/adapters/eino"
	"github.com/memvault/memvault/memvaulttest/adaptertest"
)

// refundModel is a scripted chat model that decides from its input alone,
// as a model in a new process must: with no tool result yet it calls
// approve_refund, after one it answers with the result.
type refundModel struct{}

func (refundModel) Generate(_ context.Context, in []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	last := in[len(in)-1]
	if last.Role == schema.Tool {
		return schema.AssistantMessage("Refund 1187: "+last.Content, nil), nil
	}
	return schema.AssistantMessage("", []schema.ToolCall{{
		ID: "call-1", Function: schema.FunctionCall{Name: "approve_refund", Arguments: `{"order":"1187"}`},
	}}), nil
}

func (refundModel) Stream(context.Context, []*schema.Message, ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	return nil, errors.New("refundModel does not stream")
}

func (m refundModel) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) { return m, nil }

// approveRefund stops the agent for a human decision and returns it once
// the run is resumed with one.
type approveRefund struct{}

func (approveRefund) Info(context.Context) (*schema.ToolInfo, error) {
	return &schema.ToolInfo{Name: "approve_refund", Desc: "asks a manager to approve a refund"}, nil
}

func (approveRefund) InvokableRun(ctx context.Context, _ string, _ ...tool.Option) (string, error) {
	if was, _, _ := tool.GetInterruptState[any](ctx); !was {
		return "", tool.Interrupt(ctx, "approve the refund of order 1187?")
	}
	if target, has, decision := tool.GetResumeContext[string](ctx); target && has {
		return decision, nil
	}
	return "", tool.Interrupt(ctx, "approve the refund of order 1187?")
}

// refundRunner builds the agent and its runner, as each process does.
func refundRunner(t *testing.T, store adk.CheckPointStore) *adk.Runner {
	t.Helper()
	ctx := context.Background()
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "refunds", Description: "handles refunds", Instruction: "Refund when approved.",
		Model:       refundModel{},
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: []tool.BaseTool{approveRefund{}}}},
	})
	must(t, err)
	return adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent, CheckPointStore: store})
}

// drain reads a run's events: the interrupt's root-cause id, if it
// stopped for one, and the last message.
func drain(t *testing.T, it *adk.AsyncIterator[*adk.AgentEvent]) (interruptID, last string) {
	t.Helper()
	for {
		ev, ok := it.Next()
		if !ok {
			return interruptID, last
		}
		must(t, ev.Err)
		if ev.Action != nil && ev.Action.Interrupted != nil {
			for _, c := range ev.Action.Interrupted.InterruptContexts {
				if c.IsRootCause {
					interruptID = c.ID
				}
			}
		}
		if ev.Output != nil && ev.Output.MessageOutput != nil && ev.Output.MessageOutput.Message != nil {
			last = ev.Output.MessageOutput.Message.Content
		}
	}
}

// TestADKRunnerResumeAcrossRestart: an Eino ADK agent stops in a tool for
// a human decision; its process ends; a new process, with a new runner on
// the same database (encrypted SQLite file, PostgreSQL), resumes it with
// the decision to completion.
func TestADKRunnerResumeAcrossRestart(t *testing.T) {
	ctx := context.Background()
	for _, b := range adaptertest.Backends(t, adaptertest.Options{})[1:] { // the SQL ones, encrypted
		open := b.Saver
		t.Run(b.Name, func(t *testing.T) {
			// Process 1: the agent calls the tool, which interrupts.
			saver1 := open(t)
			store1, err := eino.NewCheckPointStore(saver1, eino.Options{})
			must(t, err)
			id, last := drain(t, refundRunner(t, store1).Query(ctx, "Please refund order 1187", adk.WithCheckPointID("refund-1187")))
			if id == "" {
				t.Fatalf("the agent did not stop for approval (last message %q)", last)
			}
			if c, ok := saver1.(interface{ Close() error }); ok {
				must(t, c.Close())
			}

			// Process 2: a new saver, store, agent and runner resume it.
			store2, err := eino.NewCheckPointStore(open(t), eino.Options{})
			must(t, err)
			it, err := refundRunner(t, store2).ResumeWithParams(ctx, "refund-1187", &adk.ResumeParams{Targets: map[string]any{id: "approved by the manager"}})
			must(t, err)
			again, last := drain(t, it)
			if again != "" || !strings.Contains(last, "Refund 1187: approved by the manager") {
				t.Fatalf("resumed run: interrupt %q, last message %q", again, last)
			}
			if hist, err := store2.History(ctx, "refund-1187"); err != nil || len(hist) == 0 {
				t.Fatalf("no checkpoint history kept: %d, %v", len(hist), err)
			}
		})
	}
}
