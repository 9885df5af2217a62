package langchaingo_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/schema"

	"github.com/memvault/memvault/adapters/langchaingo"
	"github.com/memvault/memvault/adapters/shared/labels"
	"github.com/memvault/memvault/memvaulttest/adaptertest"
	"github.com/memvault/memvault/store"
)

// TestForgetUserByNamespace: LangChainGo has no user id, so the adapter
// has none to map; an application that gives each user's conversations
// and documents a namespace under ("users", user) — the README's recipe —
// with "users" as the per-subject prefix gets them erased by forgetting
// the user (see adaptertest.Forget).
func TestForgetUserByNamespace(t *testing.T) {
	ns := func(user, kind string) store.Namespace { return store.Namespace{"users", labels.Escape(user), kind} }
	open := func(t *testing.T, st store.Store, user string) (*langchaingo.ChatMessageHistory, *langchaingo.VectorStore) {
		h, err := langchaingo.NewChatMessageHistory(st, "conv-1", langchaingo.HistoryOptions{Namespace: ns(user, "chat")})
		if err != nil {
			t.Fatal(err)
		}
		vs, err := langchaingo.NewVectorStore(st, langchaingo.VectorOptions{Namespace: ns(user, "docs")})
		if err != nil {
			t.Fatal(err)
		}
		return h, vs
	}
	adaptertest.Forget(t, adaptertest.Erasure{
		Prefixes: [][]string{{"users"}},
		Subject:  labels.Escape,
		Write: func(t *testing.T, st store.Store, user string) {
			h, vs := open(t, st, user)
			secret := adaptertest.Marker(user)
			if err := h.AddMessage(t.Context(), llms.HumanChatMessage{Content: user + " is allergic to peanuts, " + secret}); err != nil {
				t.Fatal(err)
			}
			if _, err := vs.AddDocuments(t.Context(), []schema.Document{{PageContent: user + " prefers email, " + secret, Metadata: map[string]any{"note": secret}}}); err != nil {
				t.Fatal(err)
			}
		},
		Read: func(t *testing.T, st store.Store, user string) []string {
			h, vs := open(t, st, user)
			msgs, err := h.Messages(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, m := range msgs {
				out = append(out, "message "+m.GetContent())
			}
			docs, err := vs.SimilaritySearch(t.Context(), user+" prefers email", 10)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range docs {
				out = append(out, fmt.Sprintf("document %s %v", d.PageContent, d.Metadata["note"]))
			}
			slices.Sort(out)
			return out
		},
	})
}
