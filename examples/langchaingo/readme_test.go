package main

import (
	"context"
	"testing"

	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms/fake"
	"github.com/tmc/langchaingo/memory"
	"github.com/tmc/langchaingo/schema"

	"github.com/memvault/memvault/adapters/langchaingo"
	"github.com/memvault/memvault/memvaulttest/readmetest"
	"github.com/memvault/memvault/vault"
)

// TestREADMESnippet runs the README's LangChainGo snippet (quoted below,
// line for line) as a deployment would: MEMVAULT_DB and LANGGRAPH_AES_KEY
// exported. A conversation chain's turn and a document are stored, the
// document is found again, and the files hold none of it in clear.
func TestREADMESnippet(t *testing.T) {
	readmetest.Quoted(t, "../../README.md", "langchaingo.NewChatMessageHistory", "readme_test.go", "runREADMESnippet")
	dir := readmetest.Env(t)
	runREADMESnippet(t)
	readmetest.NoPlaintext(t, dir, "parcel 1187", "five working days")
}

func runREADMESnippet(t *testing.T) {
	ctx := context.Background()
	sessionID := "carol"
	h, err := vault.OpenEnv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	history, _ := langchaingo.NewChatMessageHistory(h.Store, sessionID, langchaingo.HistoryOptions{})
	mem := memory.NewConversationBuffer(memory.WithChatHistory(history))
	docs, _ := langchaingo.NewVectorStore(h.Store, langchaingo.VectorOptions{}) // the store needs an index

	if len(h.KeyIDs()) == 0 {
		t.Fatal("OpenEnv with the key exported does not encrypt")
	}
	if _, err := docs.AddDocuments(ctx, []schema.Document{{PageContent: "refunds take five working days"}}); err != nil {
		t.Fatal(err)
	}
	found, err := docs.SimilaritySearch(ctx, "how long do refunds take", 1)
	if err != nil || len(found) != 1 {
		t.Fatalf("search: %v, %v", found, err)
	}
	if _, err := chains.Run(ctx, chains.NewConversation(fake.NewFakeLLM([]string{found[0].PageContent}), mem), "my parcel 1187 is late"); err != nil {
		t.Fatal(err)
	}
	msgs, err := history.Messages(ctx)
	if err != nil || len(msgs) != 2 {
		t.Fatalf("history: %d messages, %v", len(msgs), err)
	}
}
