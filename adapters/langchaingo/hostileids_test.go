package langchaingo_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/vectorstores"

	"github.com/memvault/memvault/adapters/langchaingo"
	"github.com/memvault/memvault/memvaulttest/adaptertest"
	"github.com/memvault/memvault/store"
)

// TestHostileIDs: conversation ids, namespace labels and document ids a
// careless caller or an attacker passes — empty, NUL, invalid UTF-8,
// 64 KiB — never panic, an error never quotes a long one whole, and a
// conversation under an accepted id comes back as it went in.
func TestHostileIDs(t *testing.T) {
	ctx := context.Background()
	long := strings.Repeat("L", 64<<10)
	b := adaptertest.Backends(t, adaptertest.Options{Indexed: true})[1] // sqlite, encrypted
	st := b.Store(t)
	short := func(what string, err error) {
		t.Helper()
		if err != nil && len(err.Error()) > 2048 {
			t.Errorf("%s: error of %d bytes: %.120s…", what, len(err.Error()), err)
		}
	}
	for name, id := range map[string]string{"empty": "", "nul": "a\x00b", "bad utf8": "a\xffb", "64KiB": long, "dots": "a.b"} {
		h, err := langchaingo.NewChatMessageHistory(st, id, langchaingo.HistoryOptions{})
		short(name+": NewChatMessageHistory", err)
		if err == nil {
			added := h.AddMessage(ctx, llms.HumanChatMessage{Content: "hi\x00there"})
			short(name+": AddMessage", added)
			msgs, err := h.Messages(ctx)
			short(name+": Messages", err)
			if added == nil && err == nil && (len(msgs) != 1 || msgs[0].GetContent() != "hi\x00there") {
				t.Errorf("%s: messages came back as %v", name, msgs)
			}
		}
		_, err = langchaingo.NewChatMessageHistory(st, "c", langchaingo.HistoryOptions{Namespace: store.Namespace{"users", id, "chat"}})
		short(name+": history namespace", err)
		vs, err := langchaingo.NewVectorStore(st, langchaingo.VectorOptions{Namespace: store.Namespace{"users", id}})
		short(name+": NewVectorStore", err)
		if err == nil {
			_, err = vs.AddDocuments(ctx, []schema.Document{{PageContent: "tea", Metadata: map[string]any{"id": id}}})
			short(name+": AddDocuments", err)
		}
		vs, _ = langchaingo.NewVectorStore(st, langchaingo.VectorOptions{})
		_, err = vs.AddDocuments(ctx, []schema.Document{{PageContent: "tea", Metadata: map[string]any{id: 1}}}, vectorstores.WithNameSpace(id))
		short(name+": AddDocuments WithNameSpace", err)
		_, err = vs.SimilaritySearch(ctx, "tea", 3, vectorstores.WithNameSpace(id), vectorstores.WithFilters(map[string]any{id: 1}))
		short(name+": SimilaritySearch", err)
	}
}
