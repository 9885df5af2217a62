package adk_test

import (
	"testing"

	"google.golang.org/adk/memory"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/memvault/memvault/adapters/adk"
	"github.com/memvault/memvault/memvaulttest/adaptertest"
)

// TestMemoryService: memories are found by meaning within their app and
// user only, nothing is returned for an unrelated query, and adding a
// session again replaces its memories.
func TestMemoryService(t *testing.T) {
	for _, b := range adaptertest.Backends(t, adaptertest.Options{Indexed: true}) {
		st := b.Store(t)
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			sessions, err := adk.NewSessionService(st, adk.Options{})
			if err != nil {
				t.Fatal(err)
			}
			mem, err := adk.NewMemoryService(st, adk.MemoryOptions{})
			if err != nil {
				t.Fatal(err)
			}
			add := func(user, id string, texts ...string) session.Session {
				c, err := sessions.Create(ctx, &session.CreateRequest{AppName: "desk", UserID: user, SessionID: id})
				if err != nil {
					t.Fatal(err)
				}
				for i, text := range texts {
					ev := &session.Event{ID: id + "-" + string(rune('a'+i)), Author: "user"}
					ev.Content = genai.NewContentFromText(text, genai.RoleUser)
					if err := sessions.AppendEvent(ctx, c.Session, ev); err != nil {
						t.Fatal(err)
					}
				}
				got, err := sessions.Get(ctx, &session.GetRequest{AppName: "desk", UserID: user, SessionID: id})
				if err != nil {
					t.Fatal(err)
				}
				if err := mem.AddSessionToMemory(ctx, got.Session); err != nil {
					t.Fatal(err)
				}
				return got.Session
			}
			add("carol", "s1", "carol is allergic to peanuts", "she prefers email over phone calls")
			add("dave", "s2", "dave is allergic to peanuts too")

			search := func(user, q string) []memory.Entry {
				r, err := mem.SearchMemory(ctx, &memory.SearchRequest{AppName: "desk", UserID: user, Query: q})
				if err != nil {
					t.Fatal(err)
				}
				return r.Memories
			}
			got := search("carol", "peanuts allergy")
			if len(got) == 0 || got[0].Content.Parts[0].Text != "carol is allergic to peanuts" || got[0].Author != "user" {
				t.Fatalf("carol's peanuts: %+v", got)
			}
			for _, e := range got {
				if e.ID == "s2-a" {
					t.Fatal("dave's memory returned for carol")
				}
			}
			if got := search("carol", "quarterly tax filing deadline"); len(got) != 0 {
				t.Fatalf("unrelated query returned %d memories", len(got))
			}
			// Re-adding s1 with other events replaces its memories.
			if err := sessions.Delete(ctx, &session.DeleteRequest{AppName: "desk", UserID: "carol", SessionID: "s1"}); err != nil {
				t.Fatal(err)
			}
			add("carol", "s1", "carol moved to lisbon")
			if got := search("carol", "peanuts allergy"); len(got) != 0 {
				t.Fatalf("replaced memories still found: %+v", got)
			}
			if got := search("carol", "lisbon move"); len(got) != 1 {
				t.Fatalf("new memory: %+v", got)
			}
		})
	}
}

// TestMemoryRecallOfflineEmbedder: with the offline hashing embedder and
// the default threshold, the first-hour questions find the memory that
// answers them — and only it — where a 0.25 threshold returned nothing
// (the matches score 0.174 and 0.172); an unrelated query still finds
// nothing.
func TestMemoryRecallOfflineEmbedder(t *testing.T) {
	for _, b := range adaptertest.Backends(t, adaptertest.Options{Indexed: true}) {
		st := b.Store(t)
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			sessions, err := adk.NewSessionService(st, adk.Options{})
			if err != nil {
				t.Fatal(err)
			}
			mem, err := adk.NewMemoryService(st, adk.MemoryOptions{})
			if err != nil {
				t.Fatal(err)
			}
			const home, billing = "I have lived in Lisbon since 2019, in a small flat near the river.", "Bill my company card at the start of each month and email the receipt to finance."
			c, err := sessions.Create(ctx, &session.CreateRequest{AppName: "desk", UserID: "erin", SessionID: "s1"})
			if err != nil {
				t.Fatal(err)
			}
			for i, text := range []string{home, billing, "My order 1187 arrived broken.", "I am allergic to peanuts."} {
				ev := &session.Event{ID: "e" + string(rune('a'+i)), Author: "user"}
				ev.Content = genai.NewContentFromText(text, genai.RoleUser)
				if err := sessions.AppendEvent(ctx, c.Session, ev); err != nil {
					t.Fatal(err)
				}
			}
			got, err := sessions.Get(ctx, &session.GetRequest{AppName: "desk", UserID: "erin", SessionID: "s1"})
			if err != nil {
				t.Fatal(err)
			}
			if err := mem.AddSessionToMemory(ctx, got.Session); err != nil {
				t.Fatal(err)
			}
			for q, want := range map[string]string{"where do I live": home, "how do I bill you": billing, "quarterly tax filing deadline": ""} {
				r, err := mem.SearchMemory(ctx, &memory.SearchRequest{AppName: "desk", UserID: "erin", Query: q})
				if err != nil {
					t.Fatal(err)
				}
				var texts []string
				for _, e := range r.Memories {
					texts = append(texts, e.Content.Parts[0].Text)
				}
				if (want == "" && len(texts) != 0) || (want != "" && (len(texts) != 1 || texts[0] != want)) {
					t.Errorf("%q recalled %q, want %q", q, texts, want)
				}
			}
		})
	}
}
