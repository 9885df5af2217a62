package trpcagent_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"trpc.group/trpc-go/trpc-agent-go/memory"

	"github.com/memvault/memvault/adapters/trpcagent"
	"github.com/memvault/memvault/memvaulttest/adaptertest"
	"github.com/memvault/memvault/store"
)

// legacyMemoryID is the id the adapter gave a fact before session 30 (and
// tRPC's own services give): an unkeyed SHA-256 of the memory's text and
// of the app and user, which the namespace names in plaintext.
func legacyMemoryID(text, app, user string) string {
	sum := sha256.Sum256([]byte("memory:" + text + "|app:" + app + "|user:" + user))
	return hex.EncodeToString(sum[:])
}

// TestReviewS30MemoryIDsRevealNoText attacks "Sealed with a key: …
// memory texts" as someone holding a copy of the database and no key: a
// memory's key is plaintext, and before session 30 it was an unkeyed
// SHA-256 of the text, app and user, so hashing a list of candidate
// memories ("carol is allergic to peanuts", …) confirmed which one carol
// has — on every backend, from the raw SQLite file as from the store's key
// column — and the digest stayed in every backup after her erasure. Now
// the id is an HMAC under a key of the user's own (sealed under her data
// key with per-subject keys, erased with her): no candidate's digest, nor
// the digest of the true text, appears anywhere.
func TestReviewS30MemoryIDsRevealNoText(t *testing.T) {
	const app, who = "desk", "carol"
	secret := "Carol is allergic to peanuts and takes insulin for her diabetes"
	candidates := []string{
		"Carol is allergic to shellfish",
		"Carol takes insulin for her diabetes",
		secret,
		"Carol prefers email",
	}
	for _, b := range adaptertest.Backends(t, adaptertest.Options{Indexed: true}) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := b.Store(t)
			prefix := store.Namespace{"trpc", "s30"}
			svc, err := trpcagent.NewMemoryService(st, trpcagent.MemoryOptions{Prefix: prefix})
			must(t, err)
			uk := memory.UserKey{AppName: app, UserID: who}
			must(t, svc.AddMemory(ctx, uk, secret, []string{"health"}))

			// The attacker reads the keys of carol's memories: a plaintext
			// column on every backend.
			ns := append(prefix.Clone(), app, "memories", who)
			items, err := st.(store.Lister).ListItems(ctx, ns, store.ListItemsOptions{Limit: 10})
			must(t, err)
			if len(items) != 1 {
				t.Fatalf("%d memories stored, want 1", len(items))
			}
			for _, c := range candidates {
				if items[0].Key == legacyMemoryID(c, app, who) {
					t.Errorf("the memory's key %s is the SHA-256 of the candidate %q: its text is confirmed without a key", items[0].Key, c)
				}
			}
			// And in the raw file.
			for _, f := range b.Files {
				raw, err := os.ReadFile(f)
				if err != nil {
					continue
				}
				if bytes.Contains(raw, []byte(legacyMemoryID(secret, app, who))) {
					t.Errorf("%s holds the unkeyed digest of the memory's text", f)
				}
				if bytes.Contains(raw, []byte("peanuts")) {
					t.Errorf("%s holds the memory's text", f)
				}
			}

			// The id still names the memory: the same text again replaces
			// it, another user's same text is another id, and a second
			// service on the same store (another process) agrees.
			svc2, err := trpcagent.NewMemoryService(b.Store(t), trpcagent.MemoryOptions{Prefix: prefix})
			must(t, err)
			must(t, svc2.AddMemory(ctx, uk, secret, []string{"again"}))
			got, err := svc.ReadMemories(ctx, uk, 0)
			must(t, err)
			if len(got) != 1 || got[0].ID != items[0].Key || got[0].Memory.Topics[0] != "again" {
				t.Fatalf("after adding the same memory from another service: %d memories (%+v), want 1 under %s", len(got), got, items[0].Key)
			}
			dave := memory.UserKey{AppName: app, UserID: "dave"}
			must(t, svc.AddMemory(ctx, dave, secret, nil))
			dg, err := svc.ReadMemories(ctx, dave, 0)
			must(t, err)
			if len(dg) != 1 || dg[0].ID == items[0].Key {
				t.Fatalf("dave's memory: %+v; carol's id %s", dg, items[0].Key)
			}
		})
	}
}

// TestReviewS30FirstMemoriesRaced: services that add a user's first
// memories at the same time (several processes) agree on the key the ids
// are made under, so the same text added by each is one memory.
func TestReviewS30FirstMemoriesRaced(t *testing.T) {
	for _, b := range adaptertest.Backends(t, adaptertest.Options{Indexed: true}) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			prefix := store.Namespace{"trpc", "s30race"}
			uk := memory.UserKey{AppName: "desk", UserID: "erin"}
			const writers = 6
			svcs := make([]*trpcagent.MemoryService, writers)
			for i := range svcs {
				s, err := trpcagent.NewMemoryService(b.Store(t), trpcagent.MemoryOptions{Prefix: prefix})
				must(t, err)
				svcs[i] = s
			}
			var wg sync.WaitGroup
			errs := make([]error, writers)
			for i, s := range svcs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = s.AddMemory(ctx, uk, "Erin likes "+strings.Repeat("tea ", 3), nil)
				}()
			}
			wg.Wait()
			for _, err := range errs {
				must(t, err)
			}
			got, err := svcs[0].ReadMemories(ctx, uk, 0)
			must(t, err)
			if len(got) != 1 {
				t.Fatalf("%d concurrent adds of one memory made %d memories", writers, len(got))
			}
		})
	}
}

// TestReviewS30LegacyMemoryIDsMove: memories stored by versions before
// under their unkeyed ids stay readable, move to their keyed ids when
// added again (no duplicate) and through MigrateMemoryIDs, after which no
// key of the store is the digest of a memory's text.
func TestReviewS30LegacyMemoryIDsMove(t *testing.T) {
	const app, who = "desk", "frank"
	texts := []string{"Frank is allergic to peanuts", "Frank lives in Lyon", "Frank prefers email"}
	for _, b := range adaptertest.Backends(t, adaptertest.Options{Indexed: true}) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := b.Store(t)
			prefix := store.Namespace{"trpc", "s30legacy"}
			ns := append(prefix.Clone(), app, "memories", who)
			for _, text := range texts {
				// As a version before session 30 stored it.
				must(t, st.Put(ctx, ns, legacyMemoryID(text, app, who), map[string]any{
					"memory": text, "topics": []any{"t"}, "kind": "fact", "last_updated_ns": time.Now().UnixNano(),
				}, store.WithIndex("memory")))
			}
			svc, err := trpcagent.NewMemoryService(st, trpcagent.MemoryOptions{Prefix: prefix})
			must(t, err)
			uk := memory.UserKey{AppName: app, UserID: who}
			if got, err := svc.ReadMemories(ctx, uk, 0); err != nil || len(got) != len(texts) {
				t.Fatalf("legacy memories read: %d, %v", len(got), err)
			}
			must(t, svc.AddMemory(ctx, uk, texts[0], []string{"again"}))
			if got, err := svc.ReadMemories(ctx, uk, 0); err != nil || len(got) != len(texts) {
				t.Fatalf("after adding a legacy memory again: %d memories, %v; want %d", len(got), err, len(texts))
			}
			n, err := svc.MigrateMemoryIDs(ctx)
			must(t, err)
			if n != len(texts)-1 {
				t.Errorf("MigrateMemoryIDs moved %d, want %d", n, len(texts)-1)
			}
			if n, err := svc.MigrateMemoryIDs(ctx); err != nil || n != 0 {
				t.Errorf("MigrateMemoryIDs again: %d, %v; want 0", n, err)
			}
			got, err := svc.ReadMemories(ctx, uk, 0)
			must(t, err)
			if len(got) != len(texts) {
				t.Fatalf("after the migration: %d memories, want %d", len(got), len(texts))
			}
			for _, e := range got {
				for _, text := range texts {
					if e.ID == legacyMemoryID(text, app, who) {
						t.Errorf("memory %q still under its unkeyed id", e.Memory.Memory)
					}
				}
				if e.Memory.Memory == texts[0] && !slices.Equal(e.Memory.Topics, []string{"again"}) {
					t.Errorf("the memory added again lost its topics: %v", e.Memory.Topics)
				}
			}
			// The ids are the ones AddMemory gives: adding each again
			// leaves as many memories.
			for _, text := range texts {
				must(t, svc.AddMemory(ctx, uk, text, nil))
			}
			if got, err := svc.ReadMemories(ctx, uk, 0); err != nil || len(got) != len(texts) {
				t.Fatalf("after adding each again: %d memories, %v", len(got), err)
			}
		})
	}
}
