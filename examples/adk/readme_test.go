package main

import (
	"context"
	"testing"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/memory"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/memvault/memvault/adapters/adk"
	"github.com/memvault/memvault/memvaulttest/readmetest"
	"github.com/memvault/memvault/vault"
)

// TestREADMESnippet runs the README's ADK snippet (quoted below, line for
// line) as a deployment would: MEMVAULT_DB and LANGGRAPH_AES_KEY exported.
// A turn through ADK's runner is stored and remembered, and the files hold
// none of it in clear.
func TestREADMESnippet(t *testing.T) {
	readmetest.Quoted(t, "../../README.md", "adk.NewSessionService", "readme_test.go", "runREADMESnippet")
	dir := readmetest.Env(t)
	runREADMESnippet(t)
	readmetest.NoPlaintext(t, dir, "parcel 1187", "my parcel 1187")
}

func runREADMESnippet(t *testing.T) {
	ctx := context.Background()
	a, err := llmagent.New(llmagent.Config{Name: "helper", Model: scripted{}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := vault.OpenEnv(ctx) // LANGGRAPH_AES_KEY set: sessions are sealed
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	sessions, _ := adk.NewSessionService(h.Store, adk.Options{})
	memories, _ := adk.NewMemoryService(h.Store, adk.MemoryOptions{}) // the store needs an index
	r, _ := runner.New(runner.Config{AppName: "desk", Agent: a, SessionService: sessions, MemoryService: memories})

	if len(h.KeyIDs()) == 0 {
		t.Fatal("OpenEnv with the key exported does not encrypt")
	}
	if _, err := sessions.Create(ctx, &session.CreateRequest{AppName: "desk", UserID: "carol", SessionID: "s1"}); err != nil {
		t.Fatal(err)
	}
	for _, err := range r.Run(ctx, "carol", "s1", genai.NewContentFromText("my parcel 1187 is late", genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := sessions.Get(ctx, &session.GetRequest{AppName: "desk", UserID: "carol", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := memories.AddSessionToMemory(ctx, got.Session); err != nil {
		t.Fatal(err)
	}
	found, err := memories.SearchMemory(ctx, &memory.SearchRequest{AppName: "desk", UserID: "carol", Query: "late parcel"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Session.Events().Len() != 2 || len(found.Memories) == 0 {
		t.Fatalf("%d events stored, %d memories found", got.Session.Events().Len(), len(found.Memories))
	}
}
