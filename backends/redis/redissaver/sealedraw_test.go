package redissaver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/backends/redis/redissaver"
	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/memvaulttest/testkeys"
)

// TestChannelStateSealedInRawStorage is, for Redis, the storage half of
// the tRPC adapter's TestReviewS30PausedGraphStateSealed (which runs on
// memory, SQLite and PostgreSQL only: the adapter's module does not
// depend on the Redis backend): the adapter moves a paused graph's state
// out of metadata into a channel of its own, "trpc:extra"; here a
// checkpoint with such a channel, and a pending write, are stored by an
// encrypting saver, and no key of the server holds their text.
func TestChannelStateSealedInRawStorage(t *testing.T) {
	for _, v := range redistest.Versions {
		ctx := context.Background()
		const secret = "diagnosis-type-2-diabetes-raw"
		s := newSaver(t, v, redissaver.Options{Serde: testkeys.Encrypting(t)})
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
			ChannelValues:   map[string]any{"trpc:extra": map[string]any{"graph_interrupt_inputs": map[string]any{"intake": secret}}},
			ChannelVersions: map[string]string{"trpc:extra": s.NextVersion("")}}
		cfg, err := s.Put(ctx, checkpointer.Config{ThreadID: "patient-7"}, cp, checkpointer.Metadata{"source": "loop", "step": 0}, cp.ChannelVersions)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "note", Value: secret}}, "task-1", ""); err != nil {
			t.Fatal(err)
		}
		if tp, err := s.GetTuple(ctx, cfg); err != nil || tp == nil || !strings.Contains(fmtValue(tp.Checkpoint.ChannelValues), secret) {
			t.Fatalf("the checkpoint does not read back: %v, %v", tp, err)
		}
		rdb := redistest.Shared(t, v).Client(t)
		scanned := 0
		iter := rdb.Scan(ctx, 0, "*", 1000).Iterator()
		for iter.Next(ctx) {
			key := iter.Val()
			scanned++
			for _, text := range rawValues(t, rdb, key) {
				if strings.Contains(text, secret) {
					t.Errorf("redis%d: key %q holds the channel's state in plaintext", v, key)
				}
			}
		}
		if err := iter.Err(); err != nil {
			t.Fatal(err)
		}
		if scanned == 0 {
			t.Fatal("no key scanned: the test proves nothing")
		}
	}
}

// fmtValue is v as text.
func fmtValue(v any) string { return fmt.Sprint(v) }

// rawValues is what key holds, as text, whatever its type.
func rawValues(t *testing.T, rdb redis.UniversalClient, key string) []string {
	t.Helper()
	ctx := context.Background()
	typ, err := rdb.Type(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	switch typ {
	case "string":
		s, err := rdb.Get(ctx, key).Result()
		if err == nil {
			out = append(out, s)
		}
	case "hash":
		m, err := rdb.HGetAll(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range m {
			out = append(out, k, v)
		}
	case "zset":
		zs, err := rdb.ZRange(ctx, key, 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, zs...)
	case "set":
		ms, err := rdb.SMembers(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ms...)
	case "list":
		ls, err := rdb.LRange(ctx, key, 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ls...)
	case "none":
	default:
		t.Fatalf("key %q of type %s: not read", key, typ)
	}
	return out
}
