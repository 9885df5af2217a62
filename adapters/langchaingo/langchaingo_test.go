package langchaingo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/fake"
	lcmemory "github.com/tmc/langchaingo/memory"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/vectorstores"

	"github.com/memvault/memvault/adapters/langchaingo"
	"github.com/memvault/memvault/memvaulttest/adaptertest"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/store"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// stores opens each memvault backend's store (adaptertest), by name, with
// an index; the SQL ones encrypt.
func stores(t *testing.T) map[string]store.Store {
	t.Helper()
	out := map[string]store.Store{}
	for _, b := range adaptertest.Backends(t, adaptertest.Options{Indexed: true}) {
		out[b.Name] = b.Store(t)
	}
	return out
}

// TestHistoryRoundTrip: every LangChainGo message type comes back with its
// type and fields; SetMessages replaces, Clear empties; conversations are
// apart.
func TestHistoryRoundTrip(t *testing.T) {
	msgs := []llms.ChatMessage{
		llms.SystemChatMessage{Content: "you are helpful"},
		llms.HumanChatMessage{Content: "weather in Lisbon?"},
		llms.AIChatMessage{Content: "", ToolCalls: []llms.ToolCall{{ID: "c1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "weather", Arguments: `{"city":"Lisbon"}`}}}},
		llms.ToolChatMessage{ID: "c1", Content: `{"temp": 21}`},
		llms.FunctionChatMessage{Name: "weather", Content: "21"},
		llms.GenericChatMessage{Role: "critic", Name: "bob", Content: "ok"},
		llms.AIChatMessage{Content: "21 °C and sunny"},
	}
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			h, err := langchaingo.NewChatMessageHistory(st, "conv.1", langchaingo.HistoryOptions{})
			if err != nil {
				t.Fatal(err)
			}
			other, _ := langchaingo.NewChatMessageHistory(st, "conv.2", langchaingo.HistoryOptions{})
			for _, m := range msgs {
				if err := h.AddMessage(ctx, m); err != nil {
					t.Fatal(err)
				}
			}
			if err := other.AddUserMessage(ctx, "elsewhere"); err != nil {
				t.Fatal(err)
			}
			got, err := h.Messages(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, msgs) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(msgs)
				t.Fatalf("messages:\n got %s\nwant %s", g, w)
			}
			if err := h.SetMessages(ctx, msgs[:2]); err != nil {
				t.Fatal(err)
			}
			if got, _ := h.Messages(ctx); !reflect.DeepEqual(got, msgs[:2]) {
				t.Fatalf("after SetMessages: %#v", got)
			}
			if err := h.Clear(ctx); err != nil {
				t.Fatal(err)
			}
			if got, _ := h.Messages(ctx); len(got) != 0 {
				t.Fatalf("after Clear: %#v", got)
			}
			if got, _ := other.Messages(ctx); len(got) != 1 {
				t.Fatalf("other conversation: %#v", got)
			}
		})
	}
}

// TestHistoryConcurrentAppends: writers appending to one conversation at
// once lose no message (compare-and-set with retries).
func TestHistoryConcurrentAppends(t *testing.T) {
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			const writers, each = 6, 8
			var wg sync.WaitGroup
			errs := make(chan error, writers*each)
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					h, err := langchaingo.NewChatMessageHistory(st, "busy", langchaingo.HistoryOptions{})
					if err != nil {
						errs <- err
						return
					}
					for i := range each {
						errs <- h.AddUserMessage(context.Background(), fmt.Sprintf("w%d-%d", w, i))
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			h, _ := langchaingo.NewChatMessageHistory(st, "busy", langchaingo.HistoryOptions{})
			got, err := h.Messages(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != writers*each {
				t.Fatalf("%d messages, want %d", len(got), writers*each)
			}
		})
	}
}

// TestChainMemorySurvivesRestart: a LangChainGo conversation chain whose
// memory is the history; after the store is closed and the file opened
// again, the chain's memory still holds the earlier turns.
func TestChainMemorySurvivesRestart(t *testing.T) {
	sq := adaptertest.Backends(t, adaptertest.Options{})[1] // encrypted SQLite
	turn := func(inputs ...string) string {
		h, err := langchaingo.NewChatMessageHistory(sq.Store(t), "carol", langchaingo.HistoryOptions{})
		if err != nil {
			t.Fatal(err)
		}
		mem := lcmemory.NewConversationBuffer(lcmemory.WithChatHistory(h))
		chain := chains.NewConversation(fake.NewFakeLLM([]string{"noted", "noted again"}), mem)
		for _, in := range inputs {
			if _, err := chains.Run(t.Context(), chain, in); err != nil {
				t.Fatal(err)
			}
		}
		vars, err := mem.LoadMemoryVariables(t.Context(), map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(vars["history"])
	}
	turn("my order is 1187", "it arrived broken")
	history := turn("any update?") // a new "process" on the same file
	for _, want := range []string{"Human: my order is 1187", "AI: noted", "Human: it arrived broken", "Human: any update?"} {
		if !strings.Contains(history, want) {
			t.Fatalf("history after restart lacks %q:\n%s", want, history)
		}
	}
}

// TestVectorStoreEqualsStoreSearch: similarity search returns what the
// store's own Search returns (same documents, order and scores), with
// metadata filters and the score threshold applied, in a namespace of its
// own.
func TestVectorStoreEqualsStoreSearch(t *testing.T) {
	docs := []schema.Document{
		{PageContent: "carol is allergic to peanuts", Metadata: map[string]any{"user": "carol", "kind": "health"}},
		{PageContent: "carol prefers email", Metadata: map[string]any{"user": "carol", "kind": "contact"}},
		{PageContent: "dave is allergic to shellfish", Metadata: map[string]any{"user": "dave", "kind": "health"}},
		{PageContent: "dave lives in lisbon", Metadata: map[string]any{"user": "dave", "kind": "address"}},
	}
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			vs, err := langchaingo.NewVectorStore(st, langchaingo.VectorOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ids, err := vs.AddDocuments(ctx, docs, vectorstores.WithNameSpace("kb"))
			if err != nil || len(ids) != len(docs) {
				t.Fatalf("AddDocuments: %v %v", ids, err)
			}
			got, err := vs.SimilaritySearch(ctx, "food allergy", 3, vectorstores.WithNameSpace("kb"))
			if err != nil {
				t.Fatal(err)
			}
			want, err := st.Search(ctx, store.Namespace{"langchaingo", "docs", "kb"}, store.SearchOptions{Query: "food allergy", Limit: 3})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d documents, store.Search gave %d", len(got), len(want))
			}
			for i := range got {
				if got[i].PageContent != want[i].Value["page_content"] || got[i].Score != float32(*want[i].Score) || got[i].Metadata["user"] != want[i].Value["user"] {
					t.Fatalf("document %d: %+v, store.Search: %+v", i, got[i], want[i])
				}
			}
			if got[0].PageContent != "carol is allergic to peanuts" && got[0].PageContent != "dave is allergic to shellfish" {
				t.Fatalf("best match %q", got[0].PageContent)
			}
			only, err := vs.SimilaritySearch(ctx, "food allergy", 5, vectorstores.WithNameSpace("kb"), vectorstores.WithFilters(map[string]any{"user": "dave"}))
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range only {
				if d.Metadata["user"] != "dave" {
					t.Fatalf("filter let through %+v", d)
				}
			}
			high, err := vs.SimilaritySearch(ctx, "food allergy", 5, vectorstores.WithNameSpace("kb"), vectorstores.WithScoreThreshold(got[0].Score))
			if err != nil || len(high) == 0 || high[len(high)-1].Score < got[0].Score {
				t.Fatalf("threshold: %+v %v", high, err)
			}
			if none, err := vs.SimilaritySearch(ctx, "food allergy", 5); err != nil || len(none) != 0 {
				t.Fatalf("another namespace: %+v %v", none, err)
			}
			if _, err := vs.AddDocuments(ctx, docs, vectorstores.WithEmbedder(nil)); err != nil {
				t.Fatalf("nil embedder option: %v", err)
			}
		})
	}
}
