package redisvault_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/backends/redis/redissaver"
	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/backends/redis/redisvault"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/keystest"
	"github.com/memvault/memvault/keys/memkeys"
	"github.com/memvault/memvault/vault"
)

// TestForgetThreadWithOnlyWrites is vault's TestForgetThreadWithOnlyWrites
// on Redis, one server and a cluster: vault.Handle.Forget (over a Handle
// holding the Redis saver and a key hierarchy, as a library caller builds
// it: vault.Open refuses per-subject keys on Redis) deletes every thread
// of the subject holding any key — carol:2, whose only rows are pending
// writes stored before any put, and carol:3, whose checkpoints a removal
// killed half-way deleted — and leaves dave's. Before, the Redis saver had
// no RowThreads, forget listed the threads a put indexed (ListThreads),
// and carol:2's and carol:3's pending writes stayed, sealed under
// destroyed keys ("keys of carol:2 stay after Forget(carol): …").
func TestForgetThreadWithOnlyWrites(t *testing.T) {
	for _, mode := range []string{"single", "cluster"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			var rdb redis.UniversalClient
			if mode == "single" {
				rdb = redistest.Shared(t, 8).Client(t)
			} else {
				rdb = redistest.StartCluster(t, 8).Client(t)
			}
			prefix := redistest.Prefix()
			hier := keystest.NewHierarchy(t, memkeys.New(), keys.Subjects{ThreadSeparator: ":"})
			sv, err := redissaver.New(rdb, redissaver.Options{Prefix: prefix, Serde: hier})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = sv.Close() }()
			h := &vault.Handle{Backend: redisvault.Name, Saver: sv, Serde: hier, Keys: hier}
			put := func(thread string) checkpointer.Config {
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
					ChannelValues:   map[string]any{"notes": thread + " notes"},
					ChannelVersions: map[string]string{"notes": sv.NextVersion("")}}
				cfg, err := sv.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, nil, cp.ChannelVersions)
				if err != nil {
					t.Fatal(err)
				}
				return cfg
			}
			write := func(cfg checkpointer.Config) {
				if err := sv.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "notes", Value: cfg.ThreadID + " pending"}}, "task-1", ""); err != nil {
					t.Fatalf("put_writes of %s: %v", cfg.ThreadID, err)
				}
			}
			put("carol:1")
			put("dave:1")
			for _, th := range []string{"carol:2", "dave:2"} {
				// Pending writes before any put of the thread.
				write(checkpointer.Config{ThreadID: th, CheckpointID: checkpointer.NewID(0)})
			}
			for _, th := range []string{"carol:3", "dave:3"} {
				write(put(th))
				// A removal killed after deleting the checkpoints' keys.
				for _, k := range []string{"cp", "par", "hd", "ns", "id", "val"} {
					if err := rdb.Del(ctx, fmt.Sprintf("%s:{%s}:%s", prefix, th, k)).Err(); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, th := range []string{"carol:2", "carol:3"} {
				if n := threadKeys(t, rdb, prefix, th); n == 0 {
					t.Fatalf("no key of %s to forget", th)
				}
			}
			if _, err := h.Forget(ctx, "carol"); err != nil {
				t.Fatal(err)
			}
			for _, th := range []string{"carol:1", "carol:2", "carol:3"} {
				if n := threadKeys(t, rdb, prefix, th); n != 0 {
					t.Errorf("%d keys of %s stay after Forget(carol)", n, th)
				}
			}
			for _, th := range []string{"dave:1", "dave:2", "dave:3"} {
				if n := threadKeys(t, rdb, prefix, th); n == 0 {
					t.Errorf("Forget(carol) deleted %s", th)
				}
			}
		})
	}
}

// threadKeys counts the keys of thread under prefix, on every master of
// a cluster.
func threadKeys(t *testing.T, rdb redis.UniversalClient, prefix, thread string) int {
	t.Helper()
	ctx := context.Background()
	match := prefix + ":{" + thread + "}:*"
	count := func(c *redis.Client) (int, error) {
		n := 0
		iter := c.Scan(ctx, 0, match, 1000).Iterator()
		for iter.Next(ctx) {
			n++
		}
		return n, iter.Err()
	}
	switch c := rdb.(type) {
	case *redis.Client:
		n, err := count(c)
		if err != nil {
			t.Fatal(err)
		}
		return n
	case *redis.ClusterClient:
		var mu sync.Mutex
		total := 0
		err := c.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			n, err := count(m)
			mu.Lock()
			total += n
			mu.Unlock()
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return total
	}
	t.Fatalf("client %T", rdb)
	return 0
}
