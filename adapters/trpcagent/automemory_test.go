package trpcagent_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"

	"trpc.group/trpc-go/trpc-agent-go/agent/llmagent"
	"trpc.group/trpc-go/trpc-agent-go/memory"
	"trpc.group/trpc-go/trpc-agent-go/memory/extractor"
	"trpc.group/trpc-go/trpc-agent-go/model"
	"trpc.group/trpc-go/trpc-agent-go/runner"

	"github.com/memvault/memvault/adapters/trpcagent"
	"github.com/memvault/memvault/memvaulttest/adaptertest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/store"
)

// extractionModel is the scripted model (no network) behind tRPC's own
// extractor (extractor.NewExtractor): it answers the extraction request
// with tRPC's memory tool calls, as a model would — an add for where the
// user lives, or an update of the existing memory tRPC's prompt lists.
type extractionModel struct {
	mu   sync.Mutex
	seen []string // the existing memories of each request, as listed
}

var listed = regexp.MustCompile(`- \[([0-9a-f]+)\] (User lives in \w+)`)

func (*extractionModel) Info() model.Info { return model.Info{Name: "extraction"} }

func (m *extractionModel) GenerateContent(_ context.Context, req *model.Request) (<-chan *model.Response, error) {
	var said string
	for _, msg := range req.Messages {
		if msg.Role == model.RoleUser && strings.Contains(msg.Content, "I live in ") {
			said = msg.Content
		}
	}
	existing := listed.FindStringSubmatch(req.Messages[0].Content)
	m.mu.Lock()
	m.seen = append(m.seen, strings.Join(existing, " "))
	m.mu.Unlock()
	city := regexp.MustCompile(`I live in (\w+)`).FindStringSubmatch(said)
	var calls []model.ToolCall
	if city != nil {
		args := map[string]any{"memory": "User lives in " + city[1], "topics": []string{"home"}}
		name := memory.AddToolName
		if existing != nil {
			name, args["memory_id"] = memory.UpdateToolName, existing[1]
		}
		raw, _ := json.Marshal(args)
		calls = append(calls, model.ToolCall{Type: "function", ID: "c1", Function: model.FunctionDefinitionParam{Name: name, Arguments: raw}})
	}
	ch := make(chan *model.Response, 1)
	ch <- &model.Response{Done: true, Object: model.ObjectTypeChatCompletion, Choices: []model.Choice{{Message: model.Message{Role: model.RoleAssistant, ToolCalls: calls}}}}
	close(ch)
	return ch, nil
}

// TestAutoMemoryThroughRunner: tRPC's runner, after each run, gives the
// session to EnqueueAutoMemoryJob; tRPC's own extractor (its model
// scripted) turns "I live in Porto" into a memory, and in a later run —
// another process, a new service on the same store — is shown that memory
// (found by the service's search) and updates it to Lisbon. One memory is
// left, found by "where do I live", and the encrypted files hold neither
// city.
func TestAutoMemoryThroughRunner(t *testing.T) {
	stores, files := backendStores(t, adaptertest.Options{Indexed: true})
	for name, st := range stores {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			em := &extractionModel{}
			ns := store.Namespace{"trpc", strings.ReplaceAll(t.Name(), "/", "-")}
			turn := func(text string) {
				sessions, err := trpcagent.NewSessionService(st, trpcagent.SessionOptions{Prefix: ns})
				must(t, err)
				mems, err := trpcagent.NewMemoryService(st, trpcagent.MemoryOptions{Prefix: ns, Extractor: extractor.NewExtractor(em)})
				must(t, err)
				r := runner.NewRunner("desk", llmagent.New("desk", llmagent.WithModel(recallModel{})), runner.WithSessionService(sessions), runner.WithMemoryService(mems))
				events, err := r.Run(ctx, "carol", "chat-1", model.NewUserMessage(text))
				must(t, err)
				for ev := range events {
					if ev.Error != nil {
						t.Fatalf("run: %s", ev.Error.Message)
					}
				}
				must(t, r.Close())
				must(t, mems.Close()) // waits for the queued extraction
			}
			turn("Hello, I live in Porto.")
			turn("I moved last month: I live in Lisbon now.")

			mems, err := trpcagent.NewMemoryService(st, trpcagent.MemoryOptions{Prefix: ns})
			must(t, err)
			carol := memory.UserKey{AppName: "desk", UserID: "carol"}
			all, err := mems.ReadMemories(ctx, carol, 0)
			must(t, err)
			if len(all) != 1 || all[0].Memory.Memory != "User lives in Lisbon" || !slicesEqual(all[0].Memory.Topics, []string{"home"}) {
				t.Fatalf("memories after two runs: %+v", all)
			}
			if len(em.seen) != 2 || em.seen[0] != "" || !strings.Contains(em.seen[1], "User lives in Porto") {
				t.Fatalf("existing memories shown to the extractor: %q", em.seen)
			}
			found, err := mems.SearchMemories(ctx, carol, "where do I live")
			must(t, err)
			if len(found) != 1 || found[0].ID != all[0].ID {
				t.Fatalf("where do I live: %+v", found)
			}
		})
	}
	testkeys.NoPlaintext(t, files, "Porto", "Lisbon")
}

func slicesEqual(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }
