package trpcagent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"trpc.group/trpc-go/trpc-agent-go/agent/llmagent"
	"trpc.group/trpc-go/trpc-agent-go/model"
	"trpc.group/trpc-go/trpc-agent-go/runner"

	"github.com/memvault/memvault/adapters/trpcagent"
	"github.com/memvault/memvault/memvaulttest/adaptertest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
)

// recallModel is a scripted model (no network): it answers with the user
// messages it was given, so a reply shows what history the runner loaded.
type recallModel struct{}

func (recallModel) Info() model.Info { return model.Info{Name: "recall"} }

func (recallModel) GenerateContent(_ context.Context, req *model.Request) (<-chan *model.Response, error) {
	var said []string
	for _, m := range req.Messages {
		if m.Role == model.RoleUser {
			said = append(said, m.Content)
		}
	}
	ch := make(chan *model.Response, 1)
	ch <- &model.Response{Done: true, Object: model.ObjectTypeChatCompletion, Choices: []model.Choice{{Message: model.NewAssistantMessage(fmt.Sprintf("you said: %s", strings.Join(said, " | ")))}}}
	close(ch)
	return ch, nil
}

// TestRunnerSessionAcrossRestart: tRPC-Agent-Go's own runner keeps its
// conversation in the session service; a second process, with a new store,
// service and runner on the same encrypted SQLite file, continues it.
func TestRunnerSessionAcrossRestart(t *testing.T) {
	ctx := context.Background()
	sq := adaptertest.Backends(t, adaptertest.Options{})[1] // encrypted SQLite
	turn := func(text string) string {
		sessions, err := trpcagent.NewSessionService(sq.Store(t), trpcagent.SessionOptions{})
		must(t, err)
		agent := llmagent.New("desk", llmagent.WithModel(recallModel{}))
		r := runner.NewRunner("desk", agent, runner.WithSessionService(sessions))
		defer r.Close()
		events, err := r.Run(ctx, "carol", "chat-1", model.NewUserMessage(text))
		must(t, err)
		var reply string
		for ev := range events {
			if ev.Error != nil {
				t.Fatalf("run: %s", ev.Error.Message)
			}
			if ev.Response != nil && len(ev.Response.Choices) > 0 && ev.Response.Choices[0].Message.Role == model.RoleAssistant && !ev.IsPartial {
				reply = ev.Response.Choices[0].Message.Content
			}
		}
		return reply
	}
	if got := turn("my order is 1187"); got != "you said: my order is 1187" {
		t.Fatalf("first turn: %q", got)
	}
	if got := turn("which order was it?"); got != "you said: my order is 1187 | which order was it?" {
		t.Fatalf("second turn, in a new process: %q", got)
	}
	testkeys.NoPlaintext(t, sq.Files, "order is 1187", "which order")
}
