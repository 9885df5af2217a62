package trpcagent_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"trpc.group/trpc-go/trpc-agent-go/memory"

	"github.com/memvault/memvault/adapters/trpcagent"
	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/memvaulttest/adaptertest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/vault"
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
// under their unkeyed ids stay readable; one added again before the
// migration is held twice (AddMemory does not look its old id up, see
// TestReviewS30AuditTrailHoldsNoMemoryDigest), and MigrateMemoryIDs moves
// every one to its keyed id, merging that pair (the newer wins), after
// which no key of the store is the digest of a memory's text.
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
			if got, err := svc.ReadMemories(ctx, uk, 0); err != nil || len(got) != len(texts)+1 {
				t.Fatalf("after adding a legacy memory again: %d memories, %v; want %d", len(got), err, len(texts)+1)
			}
			n, err := svc.MigrateMemoryIDs(ctx)
			must(t, err)
			if n != len(texts) {
				t.Errorf("MigrateMemoryIDs moved %d, want %d", n, len(texts))
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

// TestReviewS30AuditTrailHoldsNoMemoryDigest: with the audit trail on,
// every store read and write is recorded with its namespace and key, for
// good (the trail is append-only). Adding a memory must therefore not even
// look up its unkeyed id: an early version of the fix read it, to move a
// memory of versions before, and so wrote the digest of every new memory's
// text into the trail.
func TestReviewS30AuditTrailHoldsNoMemoryDigest(t *testing.T) {
	ctx := t.Context()
	const app, who = "desk", "carol"
	secret := "Carol is allergic to peanuts and takes insulin for her diabetes"
	c := config.Default()
	c.Keys.Primary = testkeys.Key
	c.DBPath = filepath.Join(t.TempDir(), "agent.db")
	c.Audit = true
	h, err := vault.Open(ctx, c)
	must(t, err)
	defer h.Close()
	svc, err := trpcagent.NewMemoryService(h.Store, trpcagent.MemoryOptions{})
	must(t, err)
	uk := memory.UserKey{AppName: app, UserID: who}
	must(t, svc.AddMemory(ctx, uk, secret, nil))
	must(t, svc.UpdateMemory(ctx, memory.Key{AppName: app, UserID: who, MemoryID: mustOne(t, svc, uk)}, secret+" (type 1)", nil))
	digests := []string{legacyMemoryID(secret, app, who), legacyMemoryID(secret+" (type 1)", app, who)}
	n := 0
	must(t, h.Audit.Records(ctx, audit.Filter{}, func(r audit.Record) error {
		n++
		for _, d := range digests {
			if strings.Contains(r.Target, d) {
				t.Errorf("audit record %d (%s) names the unkeyed digest of a memory's text: %s", r.Seq, r.Op, r.Target)
			}
		}
		return nil
	}))
	if n == 0 {
		t.Fatal("the trail recorded nothing")
	}
	must(t, h.Close())
	for _, f := range []string{c.DBPath, c.DBPath + "-wal"} {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, d := range digests {
			if bytes.Contains(raw, []byte(d)) {
				t.Errorf("%s holds the unkeyed digest of a memory's text", f)
			}
		}
	}
}

// mustOne returns the id of user's one memory.
func mustOne(t *testing.T, svc *trpcagent.MemoryService, uk memory.UserKey) string {
	t.Helper()
	got, err := svc.ReadMemories(t.Context(), uk, 0)
	must(t, err)
	if len(got) != 1 {
		t.Fatalf("%d memories, want 1", len(got))
	}
	return got[0].ID
}
