package trpcagent_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"trpc.group/trpc-go/trpc-agent-go/memory"

	"github.com/memvault/memvault/adapters/trpcagent"
	"github.com/memvault/memvault/memvaulttest/adaptertest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/store"
)

// memoryServices gives each test a fresh service (its own prefix) on every
// store.
func memoryServices(t *testing.T) map[string]*trpcagent.MemoryService {
	t.Helper()
	stores, _ := backendStores(t, adaptertest.Options{Indexed: true})
	out := map[string]*trpcagent.MemoryService{}
	for name, st := range stores {
		svc, err := trpcagent.NewMemoryService(st, trpcagent.MemoryOptions{Prefix: store.Namespace{"trpc", strings.ReplaceAll(t.Name(), "/", "-")}})
		must(t, err)
		out[name] = svc
	}
	return out
}

var user = memory.UserKey{AppName: "test-app", UserID: "test-user"}

func read(t *testing.T, svc *trpcagent.MemoryService, limit int) []*memory.Entry {
	t.Helper()
	got, err := svc.ReadMemories(context.Background(), user, limit)
	must(t, err)
	return got
}

// The cases below port tRPC-Agent-Go's tests of its in-memory memory
// service (memory/inmemory) onto every memvault store; search is semantic
// here, keyword-scored there.

func TestMemoryAddUpdateDelete(t *testing.T) {
	for name, svc := range memoryServices(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			must(t, svc.AddMemory(ctx, user, "Test memory content", []string{"test", "memory"}))
			got := read(t, svc, 10)
			if len(got) != 1 || got[0].Memory.Memory != "Test memory content" || !slices.Equal(got[0].Memory.Topics, []string{"test", "memory"}) {
				t.Fatalf("after AddMemory: %+v", got)
			}
			if got[0].AppName != user.AppName || got[0].UserID != user.UserID || got[0].Memory.Kind != memory.KindFact || got[0].Memory.LastUpdated == nil {
				t.Fatalf("entry fields: %+v %+v", got[0], got[0].Memory)
			}
			// Adding the same memory again replaces it.
			must(t, svc.AddMemory(ctx, user, "Test memory content", []string{"again"}))
			if got := read(t, svc, 10); len(got) != 1 || !slices.Equal(got[0].Memory.Topics, []string{"again"}) {
				t.Fatalf("re-adding made %d memories", len(got))
			}

			// UpdateMemory rotates the id with the content and reports it.
			oldID := got[0].ID
			res := &memory.UpdateResult{}
			must(t, svc.UpdateMemory(ctx, memory.Key{AppName: user.AppName, UserID: user.UserID, MemoryID: oldID}, "updated memory", []string{"updated"}, memory.WithUpdateResult(res)))
			got = read(t, svc, 10)
			if res.MemoryID == "" || res.MemoryID == oldID || len(got) != 1 || got[0].ID != res.MemoryID || got[0].Memory.Memory != "updated memory" {
				t.Fatalf("after UpdateMemory: result %q, %+v", res.MemoryID, got)
			}
			// Same content: the id stays, topics change in place.
			same := &memory.UpdateResult{}
			must(t, svc.UpdateMemory(ctx, memory.Key{AppName: user.AppName, UserID: user.UserID, MemoryID: res.MemoryID}, "updated memory", []string{"new"}, memory.WithUpdateResult(same)))
			if got := read(t, svc, 10); same.MemoryID != res.MemoryID || len(got) != 1 || !slices.Equal(got[0].Memory.Topics, []string{"new"}) {
				t.Fatalf("in-place update: %q, %+v", same.MemoryID, got)
			}

			must(t, svc.DeleteMemory(ctx, memory.Key{AppName: user.AppName, UserID: user.UserID, MemoryID: res.MemoryID}))
			if got := read(t, svc, 10); len(got) != 0 {
				t.Fatalf("after DeleteMemory: %d memories", len(got))
			}
			if err := svc.DeleteMemory(ctx, memory.Key{AppName: user.AppName, UserID: user.UserID, MemoryID: "missing"}); err == nil {
				t.Fatal("deleting a missing memory succeeded")
			}
			if err := svc.UpdateMemory(ctx, memory.Key{AppName: user.AppName, UserID: user.UserID, MemoryID: "missing"}, "x", nil); err == nil {
				t.Fatal("updating a missing memory succeeded")
			}
		})
	}
}

func TestMemoryEpisodes(t *testing.T) {
	for name, svc := range memoryServices(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			day1 := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
			day2 := time.Date(2024, 5, 2, 0, 0, 0, 0, time.UTC)
			for _, d := range []*time.Time{&day1, &day2} {
				must(t, svc.AddMemory(ctx, user, "User met Alice", nil, memory.WithMetadata(&memory.Metadata{Kind: memory.KindEpisode, EventTime: d, Participants: []string{" Alice ", "alice", "Bob"}, Location: " Kyoto "})))
			}
			got := read(t, svc, 10)
			if len(got) != 2 || got[0].ID == got[1].ID {
				t.Fatalf("two episodes with the same text: %d memories", len(got))
			}
			// Metadata not given on update is kept.
			must(t, svc.UpdateMemory(ctx, memory.Key{AppName: user.AppName, UserID: user.UserID, MemoryID: got[0].ID}, "User met Alice again", []string{"updated"}))
			var upd *memory.Memory
			for _, e := range read(t, svc, 10) {
				if e.Memory.Memory == "User met Alice again" {
					upd = e.Memory
				}
			}
			if upd == nil || upd.Kind != memory.KindEpisode || upd.EventTime == nil || !slices.Equal(upd.Participants, []string{"Alice", "Bob"}) || upd.Location != "Kyoto" {
				t.Fatalf("metadata after update: %+v", upd)
			}
			// Kind and time filters.
			eps, err := svc.SearchMemories(ctx, user, "met Alice", memory.WithSearchOptions(memory.SearchOptions{Query: "met Alice", Kind: memory.KindEpisode, TimeAfter: &day2}))
			must(t, err)
			if len(eps) != 1 || !eps[0].Memory.EventTime.Equal(day2) {
				t.Fatalf("episodes after day 2: %+v", eps)
			}
			facts, err := svc.SearchMemories(ctx, user, "met Alice", memory.WithSearchOptions(memory.SearchOptions{Query: "met Alice", Kind: memory.KindFact}))
			must(t, err)
			if len(facts) != 0 {
				t.Fatalf("facts: %d, want none", len(facts))
			}
			fb, err := svc.SearchMemories(ctx, user, "met Alice", memory.WithSearchOptions(memory.SearchOptions{Query: "met Alice", Kind: memory.KindFact, KindFallback: true}))
			must(t, err)
			if len(fb) != 2 {
				t.Fatalf("kind fallback: %d, want the 2 episodes", len(fb))
			}
			if _, err := svc.SearchMemories(ctx, user, "x", memory.WithSearchOptions(memory.SearchOptions{Query: "x", HybridSearch: true})); err == nil {
				t.Fatal("hybrid search was silently accepted")
			}
		})
	}
}

func TestMemoryUpdateConflictKeepsBoth(t *testing.T) {
	for name, svc := range memoryServices(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			must(t, svc.AddMemory(ctx, user, "source", []string{"source"}))
			must(t, svc.AddMemory(ctx, user, "target", []string{"target"}))
			var sourceID string
			for _, e := range read(t, svc, 10) {
				if e.Memory.Memory == "source" {
					sourceID = e.ID
				}
			}
			res := &memory.UpdateResult{MemoryID: "unchanged"}
			if err := svc.UpdateMemory(ctx, memory.Key{AppName: user.AppName, UserID: user.UserID, MemoryID: sourceID}, "target", []string{"target"}, memory.WithUpdateResult(res)); err == nil {
				t.Fatal("update onto an existing memory's id succeeded")
			}
			got := read(t, svc, 10)
			if res.MemoryID != "unchanged" || len(got) != 2 {
				t.Fatalf("after refused update: result %q, %d memories", res.MemoryID, len(got))
			}
		})
	}
}

func TestMemorySearchAndClear(t *testing.T) {
	stores, files := backendStores(t, adaptertest.Options{Indexed: true})
	for name, st := range stores {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			svc, err := trpcagent.NewMemoryService(st, trpcagent.MemoryOptions{})
			must(t, err)
			must(t, svc.AddMemory(ctx, user, "User likes coffee", []string{"preferences"}))
			must(t, svc.AddMemory(ctx, user, "User works as a developer", []string{"work"}))
			other := memory.UserKey{AppName: "test-app", UserID: "someone.else"}
			must(t, svc.AddMemory(ctx, other, "Someone else likes coffee", nil))

			for q, want := range map[string]string{"coffee": "User likes coffee", "developer": "User works as a developer"} {
				got, err := svc.SearchMemories(ctx, user, q)
				must(t, err)
				if len(got) != 1 || got[0].Memory.Memory != want || got[0].Score < trpcagent.DefaultMinScore {
					t.Fatalf("search %q: %+v", q, got)
				}
				// The same ranking as the store's own search.
				raw, err := st.Search(ctx, store.Namespace{"trpc", "test-app", "memories", "test-user"}, store.SearchOptions{Query: q, Limit: 1})
				must(t, err)
				if raw[0].Key != got[0].ID || *raw[0].Score != got[0].Score {
					t.Fatalf("search %q: %s %v, the store ranks %s %v first", q, got[0].ID, got[0].Score, raw[0].Key, *raw[0].Score)
				}
			}
			if got, err := svc.SearchMemories(ctx, user, "nonexistent"); err != nil || len(got) != 0 {
				t.Fatalf("search for nothing: %d results, %v", len(got), err)
			}
			if got := read(t, svc, 1); len(got) != 1 || got[0].Memory.Memory != "User works as a developer" {
				t.Fatalf("ReadMemories(1) is not the newest: %+v", got)
			}

			must(t, svc.ClearMemories(ctx, user))
			if got := read(t, svc, 0); len(got) != 0 {
				t.Fatalf("after ClearMemories: %d", len(got))
			}
			if got, err := svc.ReadMemories(ctx, other, 0); err != nil || len(got) != 1 {
				t.Fatalf("another user's memories after clear: %d, %v", len(got), err)
			}
		})
	}
	testkeys.NoPlaintext(t, files, "likes coffee", "developer")
}

func TestMemoryValidationAndTools(t *testing.T) {
	stores, _ := backendStores(t, adaptertest.Options{Indexed: true})
	svc, err := trpcagent.NewMemoryService(stores["memory"], trpcagent.MemoryOptions{})
	must(t, err)
	ctx := context.Background()
	for _, err := range []error{
		svc.AddMemory(ctx, memory.UserKey{UserID: "u"}, "m", nil),
		svc.AddMemory(ctx, memory.UserKey{AppName: "a"}, "m", nil),
		svc.DeleteMemory(ctx, memory.Key{AppName: "a", UserID: "u"}),
		svc.ClearMemories(ctx, memory.UserKey{}),
	} {
		if err == nil {
			t.Fatal("an empty app, user or memory id was accepted")
		}
	}
	var names []string
	for _, tl := range svc.Tools() {
		names = append(names, tl.Declaration().Name)
	}
	if want := []string{memory.AddToolName, memory.LoadToolName, memory.SearchToolName, memory.UpdateToolName}; !slices.Equal(names, want) {
		t.Fatalf("default tools %v, want %v", names, want)
	}
	if _, err := trpcagent.NewMemoryService(stores["memory"], trpcagent.MemoryOptions{Tools: []string{"memory_forget_everything"}}); err == nil {
		t.Fatal("an unknown tool name was accepted")
	}
	if err := svc.EnqueueAutoMemoryJob(ctx, nil); err != nil {
		t.Fatal(err)
	}
}

// TestMemoryRecallOfflineEmbedder: with the offline hashing embedder and
// the default threshold, the first-hour questions find the memory that
// answers them — and only it — where a 0.25 threshold returned nothing
// (the matches score 0.174 and 0.172); an unrelated query still finds
// nothing, and a caller's SimilarityThreshold still wins.
func TestMemoryRecallOfflineEmbedder(t *testing.T) {
	const home, billing = "I have lived in Lisbon since 2019, in a small flat near the river.", "Bill my company card at the start of each month and email the receipt to finance."
	for name, svc := range memoryServices(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			for _, text := range []string{home, billing, "My order 1187 arrived broken.", "I am allergic to peanuts."} {
				must(t, svc.AddMemory(ctx, user, text, nil))
			}
			for q, want := range map[string]string{"where do I live": home, "how do I bill you": billing, "quarterly tax filing deadline": ""} {
				got, err := svc.SearchMemories(ctx, user, q)
				must(t, err)
				var texts []string
				for _, e := range got {
					texts = append(texts, e.Memory.Memory)
				}
				if (want == "" && len(texts) != 0) || (want != "" && (len(texts) != 1 || texts[0] != want)) {
					t.Errorf("%q recalled %q, want %q", q, texts, want)
				}
			}
			got, err := svc.SearchMemories(ctx, user, "where do I live", memory.WithSearchOptions(memory.SearchOptions{Query: "where do I live", SimilarityThreshold: 0.25}))
			must(t, err)
			if len(got) != 0 {
				t.Errorf("SimilarityThreshold 0.25 ignored: %d memories", len(got))
			}
		})
	}
}
