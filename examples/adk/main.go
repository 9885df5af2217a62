// Command adk runs a Google ADK agent whose sessions and memory live in
// memvault: an encrypted SQLite file on the embedded default. The agent's model is
// scripted (no network): it answers with the user messages the session
// history gives it. The program runs two turns, "restarts" (closes
// everything and opens the file again, as a new process would), and runs a
// third turn that still sees the first two; the first process's session,
// added to memory, is found again by meaning.
//
// Run it from the repository root:
//
//	make example-adk
//
// The database goes to a temporary directory, or to MEMVAULT_DB when that is
// set (the file is then kept). With LANGGRAPH_AES_KEY unset a demo key is
// used, so that the file is encrypted either way.
package main

import (
	"context"
	"fmt"
	"io"
	"iter"
	"strings"

	"github.com/memvault/memvault/examples/demoenv"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/memory"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	memvaultadk "github.com/memvault/memvault/adapters/adk"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/vault"
)

const (
	app  = "support-desk"
	user = "carol@example.com"
	sid  = "ticket-42"
)

func main() { demoenv.Main("adk.db", demo) }

// demo runs the two "processes" on the database file at path.
func demo(ctx context.Context, w io.Writer, path string) error {
	cfg := demoenv.Config(path) // SQLite, offline embedder, encrypted
	fmt.Fprintln(w, "process 1:")
	if err := run(ctx, w, cfg, true, "my order 1187 arrived broken", "please send a replacement"); err != nil {
		return err
	}
	fmt.Fprintln(w, "process 2 (same file, new handles):")
	return run(ctx, w, cfg, false, "any update?")
}

// run opens memvault as a fresh process would, runs the turns, and closes.
func run(ctx context.Context, w io.Writer, cfg config.Config, create bool, turns ...string) error {
	h, err := vault.Open(ctx, cfg)
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer h.Close()
	// The lines an ADK program adds: sessions and memory in memvault.
	sessions, err := memvaultadk.NewSessionService(h.Store, memvaultadk.Options{})
	if err != nil {
		return err
	}
	memories, err := memvaultadk.NewMemoryService(h.Store, memvaultadk.MemoryOptions{})
	if err != nil {
		return err
	}
	if create {
		if _, err := sessions.Create(ctx, &session.CreateRequest{AppName: app, UserID: user, SessionID: sid}); err != nil {
			return err
		}
	}
	a, err := llmagent.New(llmagent.Config{
		Name:        "helper",
		Description: "answers support tickets",
		Model:       scripted{},
	})
	if err != nil {
		return err
	}
	r, err := runner.New(runner.Config{AppName: app, Agent: a, SessionService: sessions, MemoryService: memories})
	if err != nil {
		return err
	}
	for _, text := range turns {
		fmt.Fprintf(w, "  user:  %s\n", text)
		for ev, err := range r.Run(ctx, user, sid, genai.NewContentFromText(text, genai.RoleUser), agent.RunConfig{}) {
			if err != nil {
				return err
			}
			if ev.Content != nil && ev.Author != "user" {
				fmt.Fprintf(w, "  agent: %s\n", ev.Content.Parts[0].Text)
			}
		}
	}
	got, err := sessions.Get(ctx, &session.GetRequest{AppName: app, UserID: user, SessionID: sid})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  stored events: %d\n", got.Session.Events().Len())
	if create {
		// The session goes into long-term memory, for later sessions.
		return memories.AddSessionToMemory(ctx, got.Session)
	}
	found, err := memories.SearchMemory(ctx, &memory.SearchRequest{AppName: app, UserID: user, Query: "broken order"})
	if err != nil {
		return err
	}
	for _, m := range found.Memories {
		fmt.Fprintf(w, "  remembered: %s\n", m.Content.Parts[0].Text)
	}
	return nil
}

// scripted is a model that needs no network: it answers with the user
// messages it was given, so the answer shows what the session kept.
type scripted struct{}

func (scripted) Name() string { return "scripted" }

func (scripted) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	var said []string
	for _, c := range req.Contents {
		if c.Role == genai.RoleUser && len(c.Parts) > 0 {
			said = append(said, c.Parts[0].Text)
		}
	}
	answer := fmt.Sprintf("I have %d message(s) from you: %s", len(said), strings.Join(said, " / "))
	return func(yield func(*model.LLMResponse, error) bool) {
		yield(&model.LLMResponse{Content: genai.NewContentFromText(answer, genai.RoleModel), TurnComplete: true}, nil)
	}
}
