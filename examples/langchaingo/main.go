// Command langchaingo runs a LangChainGo conversation chain whose memory is
// kept in memvault (an encrypted SQLite file on the embedded default) and
// answers from a memvault vector store. The model is LangChainGo's fake
// (no network). The program runs two turns, "restarts" (closes everything
// and opens the file again, as a new process would) and runs a third turn,
// whose memory still holds the first two.
//
// Run it from the repository root:
//
//	make example-langchaingo
//
// The database goes to a temporary directory, or to MEMVAULT_DB when that is
// set (the file is then kept). With LANGGRAPH_AES_KEY unset a demo key is
// used, so that the file is encrypted either way.
package main

import (
	"context"
	"fmt"
	"io"

	"github.com/memvault/memvault/examples/demoenv"

	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms/fake"
	lcmemory "github.com/tmc/langchaingo/memory"
	"github.com/tmc/langchaingo/schema"

	"github.com/memvault/memvault/adapters/langchaingo"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/vault"
)

func main() { demoenv.Main("chat.db", demo) }

// demo runs the two "processes" on the database file at path.
func demo(ctx context.Context, w io.Writer, path string) error {
	cfg := demoenv.Config(path) // SQLite, offline embedder, encrypted
	fmt.Fprintln(w, "process 1:")
	if err := run(ctx, w, cfg, true, "my parcel 1187 is late", "how long do refunds take?"); err != nil {
		return err
	}
	fmt.Fprintln(w, "process 2 (same file, new handles):")
	return run(ctx, w, cfg, false, "thanks, and where do parcels ship from?")
}

// run opens memvault as a fresh process would, runs the turns, and closes.
func run(ctx context.Context, w io.Writer, cfg config.Config, seed bool, turns ...string) error {
	h, err := vault.Open(ctx, cfg)
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer h.Close()
	// The lines a LangChainGo program adds: history and documents in memvault.
	history, err := langchaingo.NewChatMessageHistory(h.Store, "carol", langchaingo.HistoryOptions{})
	if err != nil {
		return err
	}
	kb, err := langchaingo.NewVectorStore(h.Store, langchaingo.VectorOptions{})
	if err != nil {
		return err
	}
	if seed {
		if _, err := kb.AddDocuments(ctx, []schema.Document{
			{PageContent: "refunds take five working days", Metadata: map[string]any{"topic": "refund"}},
			{PageContent: "parcels ship from lisbon", Metadata: map[string]any{"topic": "shipping"}},
		}); err != nil {
			return err
		}
	}
	mem := lcmemory.NewConversationBuffer(lcmemory.WithChatHistory(history))
	for _, in := range turns {
		docs, err := kb.SimilaritySearch(ctx, in, 1)
		if err != nil {
			return err
		}
		answer := "let me check"
		if len(docs) > 0 {
			answer = docs[0].PageContent
		}
		chain := chains.NewConversation(fake.NewFakeLLM([]string{answer}), mem)
		out, err := chains.Run(ctx, chain, in)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  user:  %s\n  agent: %s\n", in, out)
	}
	msgs, err := history.Messages(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  messages in memory: %d\n", len(msgs))
	return nil
}
