package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/memvault/memvault/backends/redis/redisstore"
	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/storetest"
)

// TestSweepRemovesEverything: memvault's sweeper deletes an expired item
// with everything the layout keeps of it — its hash, its header, its row
// id, its expiry entry and its vector set elements — while a read
// refreshes the TTL of the item it returns, which the sweep then keeps.
func TestSweepRemovesEverything(t *testing.T) {
	ctx := context.Background()
	for _, v := range redistest.Versions {
		t.Run(fmt.Sprintf("redis%d", v), func(t *testing.T) {
			rdb := redistest.Shared(t, v).Client(t)
			clock := storetest.NewClock()
			prefix := redistest.Prefix()
			st := newStore(t, rdb, redisstore.Options{Prefix: prefix, Now: clock.Now,
				Index: &store.IndexConfig{Embedder: embeddings.NewUnkeyedHashing(32), Fields: []string{"text"}},
				TTL:   &store.TTLConfig{DefaultTTL: 10 * time.Minute, SweepInterval: -1}})
			ns := store.Namespace{"users", "ann"}
			for i := range 5 {
				if err := st.Put(ctx, ns, fmt.Sprint("k", i), map[string]any{"text": fmt.Sprint("memory ", i)}); err != nil {
					t.Fatal(err)
				}
			}
			clock.Advance(6 * time.Minute)
			if it, err := st.Get(ctx, ns, "k0"); err != nil || it == nil {
				t.Fatalf("Get k0: %v, %v", it, err)
			}
			clock.Advance(6 * time.Minute) // k1…k4 expired; k0 refreshed
			n, err := st.Sweep(ctx)
			if err != nil || n != 4 {
				t.Fatalf("Sweep: %d, %v; want 4", n, err)
			}
			tag := "{" + prefix + "}:"
			keys, err := rdb.Keys(ctx, tag+"r:*").Result()
			if err != nil || len(keys) != 1 {
				t.Fatalf("item hashes after the sweep: %q, %v; want k0's only", keys, err)
			}
			for key, want := range map[string]int64{"m": 1, "k": 1, "x": 1} {
				var got int64
				if key == "m" {
					got, err = rdb.HLen(ctx, tag+key).Result()
				} else {
					got, err = rdb.ZCard(ctx, tag+key).Result()
				}
				if err != nil || got != want {
					t.Fatalf("%s after the sweep: %d entries, %v; want %d", key, got, err, want)
				}
			}
			if st.VectorSets() {
				if n, err := rdb.Do(ctx, "VCARD", tag+"vs").Int64(); err != nil || n != 1 {
					t.Fatalf("vector set after the sweep: %d elements, %v; want 1", n, err)
				}
			}
		})
	}
}
