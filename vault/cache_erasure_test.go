package vault

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/memvault/memvault/memvaulttest/childproc"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/cache"
)

// TestCacheErasureChild is the other process of
// TestCachedStoreServesNothingAfterForget: it forgets carol and says
// "forgotten".
func TestCacheErasureChild(t *testing.T) {
	var arg struct {
		RC raceConfig
	}
	if !childproc.Arg(t, &arg) {
		t.Skip("a child process of TestCachedStoreServesNothingAfterForget")
	}
	c := arg.RC.config()
	c.Embeddings = "none"
	h, err := Open(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := h.Forget(context.Background(), "carol"); err != nil {
		t.Fatal(err)
	}
	childproc.Say("forgotten")
}

// TestCachedStoreServesNothingAfterForget (session 33, carried from the
// last closing note): a store/cache wrapped around the vault's store kept
// serving carol's memory, decrypted, for up to MaxAge (30 s) after
// Forget(carol) returned — through the same handle, and in a process
// that had it cached when another process forgot her. The cache now
// never keeps an item the inner store seals under a data subject's keys
// (cache.SubjectSealer); an item of no subject is still served from it.
func TestCachedStoreServesNothingAfterForget(t *testing.T) {
	ctx := context.Background()
	carol, shared := store.Namespace{"users", "carol"}, store.Namespace{"shared"}
	for _, backend := range []string{"sqlite", "postgres"} {
		for _, where := range []string{"same handle", "other process"} {
			t.Run(backend+"/"+where, func(t *testing.T) {
				c := subjectsConfigOn(t, backend == "postgres")
				// Audit off: over the audited store the cache keeps
				// nothing at all (cache.ReadRecorder, audit's
				// TestCacheOverAuditedStoreRecordsEveryRead).
				h, err := Open(ctx, c)
				if err != nil {
					t.Fatal(err)
				}
				defer h.Close()
				// An hour, not DefaultMaxAge's 30 s: under -race on a loaded
				// machine the other process's start, Open and Forget can take
				// longer than that, and the shared item warmed before would
				// no longer be a hit; nothing here may rely on ageing out.
				cs, err := cache.New(h.Store, cache.Options{MaxAge: time.Hour})
				if err != nil {
					t.Fatal(err)
				}
				if err := cs.Put(ctx, carol, "health", map[string]any{"text": "carol is allergic to peanuts"}); err != nil {
					t.Fatal(err)
				}
				if err := cs.Put(ctx, shared, "faq", map[string]any{"text": "opening hours"}); err != nil {
					t.Fatal(err)
				}
				for range 2 { // warm: the second Get of each is a hit if cached
					for _, g := range []struct {
						ns  store.Namespace
						key string
					}{{carol, "health"}, {shared, "faq"}} {
						if it, err := cs.Get(ctx, g.ns, g.key); err != nil || it == nil {
							t.Fatalf("Get %v/%s before the forget: %v, %v", g.ns, g.key, it, err)
						}
					}
				}
				if where == "same handle" {
					if _, err := h.Forget(ctx, "carol"); err != nil {
						t.Fatal(err)
					}
				} else {
					child := childproc.Start(t, "TestCacheErasureChild", struct {
						RC raceConfig
					}{raceConfig{DB: c.DBPath, DSN: c.DSN, KeyTable: c.KeyTable}})
					select {
					case l, ok := <-child.Lines:
						if !ok || l != "forgotten" {
							t.Fatalf("the forgetting process: %q", l)
						}
					case <-time.After(2 * time.Minute):
						t.Fatal("the forgetting process did not finish")
					}
					child.Wait()
				}
				if it, err := cs.Get(ctx, carol, "health"); err != nil || it != nil {
					t.Errorf("after Forget(carol) returned, the cached store served her memory: %v (err %v)", it, err)
				}
				before := cs.Stats().Hits
				if it, err := cs.Get(ctx, shared, "faq"); err != nil || it == nil {
					t.Errorf("Get of an item of no subject after the forget: %v, %v", it, err)
				}
				if cs.Stats().Hits != before+1 {
					t.Errorf("an item of no subject was not served from the cache")
				}
			})
		}
	}
}

// TestEngineValueCacheOpensNothingAfterForget (session 33, the brief's
// "check!" of the engine's own LRU, MEMVAULT_CACHE_SIZE; held before):
// a process whose store has read carol's item (the engine's cache of
// opened values on, as on PostgreSQL by default) is handed her row back
// after Forget(carol) — a restored backup of the row beside the live
// process. The engine keeps no opened value of a subject, so the row is
// opened with her keys, which are gone: serde.ErrDecrypt, never her text.
func TestEngineValueCacheOpensNothingAfterForget(t *testing.T) {
	ctx := context.Background()
	carol := store.Namespace{"users", "carol"}
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			c := subjectsConfigOn(t, backend == "postgres")
			c.CacheSize = 100
			h, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			if err := h.Store.Put(ctx, carol, "health", map[string]any{"text": "carol is allergic to peanuts"}); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if it, err := h.Store.Get(ctx, carol, "health"); err != nil || it == nil {
					t.Fatalf("Get before the forget: %v, %v", it, err)
				}
			}
			exec := func(q string) {
				t.Helper()
				if h.Pool != nil {
					_, err = h.Pool.Exec(ctx, q)
				} else {
					db := openRaw(t, c.DBPath)
					_, err = db.ExecContext(ctx, q)
					db.Close()
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			exec(`CREATE TABLE saved_row AS SELECT * FROM store WHERE prefix = 'users.carol'`)
			if _, err := h.Forget(ctx, "carol"); err != nil {
				t.Fatal(err)
			}
			exec(`INSERT INTO store SELECT * FROM saved_row`)
			if it, err := h.Store.Get(ctx, carol, "health"); !errors.Is(err, serde.ErrDecrypt) || it != nil {
				t.Errorf("Get of carol's restored row after Forget(carol): %v, %v; want serde.ErrDecrypt", it, err)
			}
		})
	}
}
