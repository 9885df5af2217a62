package langchaingo_test

import (
	"context"
	"fmt"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/schema"

	"github.com/memvault/memvault/adapters/langchaingo"
	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/memstore"
)

// A conversation's history and a knowledge base in one memvault store.
func Example() {
	ctx := context.Background()
	st, _ := memstore.New(memstore.Options{Index: &store.IndexConfig{Embedder: embeddings.NewUnkeyedHashing(256)}})
	defer st.Close()

	history, _ := langchaingo.NewChatMessageHistory(st, "carol", langchaingo.HistoryOptions{})
	_ = history.AddUserMessage(ctx, "my parcel is late")
	_ = history.AddMessage(ctx, llms.AIChatMessage{Content: "which order?"})
	msgs, _ := history.Messages(ctx)
	fmt.Println(len(msgs), msgs[1].GetType(), msgs[1].GetContent())

	kb, _ := langchaingo.NewVectorStore(st, langchaingo.VectorOptions{})
	_, _ = kb.AddDocuments(ctx, []schema.Document{
		{PageContent: "refunds take five working days", Metadata: map[string]any{"topic": "refund"}},
		{PageContent: "parcels ship from lisbon", Metadata: map[string]any{"topic": "shipping"}},
	})
	docs, _ := kb.SimilaritySearch(ctx, "how long does a refund take", 1)
	fmt.Println(docs[0].PageContent, docs[0].Metadata["topic"])
	// Output:
	// 2 ai which order?
	// refunds take five working days refund
}
