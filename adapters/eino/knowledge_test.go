package eino_test

import (
	"testing"

	"github.com/cloudwego/eino/components/retriever"
	"github.com/cloudwego/eino/schema"

	"github.com/memvault/memvault/adapters/eino"
	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/memvaulttest/adaptertest"
	"github.com/memvault/memvault/store"
)

// TestKnowledgeEqualsStoreSearch: Retrieve returns what the store's own
// Search returns (same documents, order and scores), in the index's own
// namespace, with the score threshold applied; Eino embedding options are
// refused.
func TestKnowledgeEqualsStoreSearch(t *testing.T) {
	docs := []*schema.Document{
		{ID: "d1", Content: "refunds take five working days", MetaData: map[string]any{"topic": "refund"}},
		{Content: "parcels ship from lisbon", MetaData: map[string]any{"topic": "shipping"}},
		{ID: "d3", Content: "refund requests need the order number", MetaData: map[string]any{"topic": "refund"}},
	}
	for _, b := range adaptertest.Backends(t, adaptertest.Options{Indexed: true}) {
		name, st := b.Name, b.Store(t)
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			kb, err := eino.NewKnowledge(st, eino.KnowledgeOptions{})
			must(t, err)
			ids, err := kb.Store(ctx, docs)
			must(t, err)
			if len(ids) != 3 || ids[0] != "d1" || ids[1] == "" || ids[2] != "d3" {
				t.Fatalf("ids %q", ids)
			}
			got, err := kb.Retrieve(ctx, "how long does a refund take", retriever.WithTopK(2))
			must(t, err)
			want, err := st.Search(ctx, store.Namespace{"eino", "docs", "default"}, store.SearchOptions{Query: "how long does a refund take", Limit: 2})
			must(t, err)
			if len(got) != len(want) || len(got) != 2 {
				t.Fatalf("%d documents, store.Search gave %d", len(got), len(want))
			}
			for i := range got {
				if got[i].ID != want[i].Key || got[i].Content != want[i].Value["content"] || got[i].Score() != *want[i].Score || got[i].MetaData["topic"] != want[i].Value["topic"] {
					t.Fatalf("document %d: %+v, store.Search: %+v", i, got[i], want[i])
				}
			}
			high, err := kb.Retrieve(ctx, "how long does a refund take", retriever.WithScoreThreshold(got[0].Score()))
			must(t, err)
			if len(high) == 0 || high[len(high)-1].Score() < got[0].Score() {
				t.Fatalf("threshold: %d documents", len(high))
			}
			other, err := kb.Retrieve(ctx, "refund", retriever.WithIndex("other"))
			must(t, err)
			if len(other) != 0 {
				t.Fatalf("another index returned %d documents", len(other))
			}
			if _, err := kb.Retrieve(ctx, "refund", retriever.WithEmbedding(eino.NewEmbedder(embeddings.NewUnkeyedHashing(256)))); err == nil {
				t.Fatal("an Eino embedding option was accepted")
			}
		})
	}
}

// TestEmbedderWidens: Eino's embedder gives memvault's vectors as float64.
func TestEmbedderWidens(t *testing.T) {
	h := embeddings.NewUnkeyedHashing(64)
	want, err := h.EmbedDocuments(t.Context(), []string{"a refund", "lisbon"})
	must(t, err)
	got, err := eino.NewEmbedder(h).EmbedStrings(t.Context(), []string{"a refund", "lisbon"})
	must(t, err)
	for i := range want {
		for j := range want[i] {
			if got[i][j] != float64(want[i][j]) {
				t.Fatalf("vector %d[%d] = %v, want %v", i, j, got[i][j], want[i][j])
			}
		}
	}
}
