package redissaver

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/checkpointer"
)

// scriptRecorder keeps the arguments of every EVALSHA of the scripts it
// watches, as sent.
type scriptRecorder struct {
	mu     sync.Mutex
	hashes []string
	args   [][]any
}

func (r *scriptRecorder) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *scriptRecorder) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if a := cmd.Args(); len(a) > 1 && a[0] == "evalsha" && slices.Contains(r.hashes, a[1].(string)) {
			r.mu.Lock()
			r.args = append(r.args, slices.Clone(a))
			r.mu.Unlock()
		}
		return next(ctx, cmd)
	}
}

func (r *scriptRecorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestPutSentAgain: go-redis sends a command again when its reply does
// not come (an EOF after the server ran it; past ReadTimeout when it
// retries timeouts), as redisstore's TestCommitSentAgain found for the
// store's commit. A put's and a pending write's script sent again after
// they were applied — and after the thread moved on by a later put and
// writes — reply OK and change nothing: each write is idempotent (HSET of
// the same record and head, HSETNX for the parent, values and writes,
// ZADD of the same members), so a resent put neither fails a put that
// happened nor applies it twice, on both servers.
func TestPutSentAgain(t *testing.T) {
	for _, v := range redistest.Versions {
		t.Run("redis"+string(rune('0'+v)), func(t *testing.T) {
			ctx := context.Background()
			rdb := redistest.Shared(t, v).Client(t)
			rec := &scriptRecorder{hashes: []string{putScript.Hash(), writesScript.Hash(), putScriptFNX.Hash(), writesScriptFNX.Hash()}}
			rdb.AddHook(rec)
			s, err := New(rdb, Options{Prefix: redistest.Prefix()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			cfg := checkpointer.Config{ThreadID: "t"}
			ver := ""
			var second checkpointer.Config
			for n := range 3 {
				ver = s.NextVersion(ver)
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(n),
					ChannelValues: map[string]any{"n": float64(n)}, ChannelVersions: map[string]string{"n": ver}}
				if cfg, err = s.Put(ctx, cfg, cp, checkpointer.Metadata{"step": n}, cp.ChannelVersions); err != nil {
					t.Fatal(err)
				}
				if n == 1 {
					second = cfg
				}
				if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "out", Value: float64(n)}}, "task", ""); err != nil {
					t.Fatal(err)
				}
			}
			rec.mu.Lock()
			sent := slices.Clone(rec.args)
			rec.mu.Unlock()
			if len(sent) != 6 {
				t.Fatalf("%d scripts recorded for 3 puts and 3 writes", len(sent))
			}
			before := snapshotThread(t, s, "t")
			for i, a := range sent {
				r, err := rdb.Do(ctx, a...).Text()
				if err != nil || r != replyOK {
					t.Fatalf("script %d sent again: %q, %v; want OK", i, r, err)
				}
			}
			if after := snapshotThread(t, s, "t"); !maps.EqualFunc(before, after, slices.Equal) {
				t.Fatalf("the scripts sent again changed the thread:\nbefore %q\nafter  %q", before, after)
			}
			// The second checkpoint still reads as written (its parent,
			// its value, its write).
			tup, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "t", CheckpointID: second.CheckpointID})
			if err != nil || tup == nil || tup.Checkpoint.ChannelValues["n"] != float64(1) || len(tup.PendingWrites) != 1 || tup.ParentConfig == nil {
				t.Fatalf("checkpoint 1 after the scripts sent again: %+v, %v", tup, err)
			}
		})
	}
}

// snapshotThread is every key of thread and the thread index: each
// hash's fields and values, each sorted set's members, in order.
func snapshotThread(t *testing.T, s *Saver, thread string) map[string][]string {
	t.Helper()
	ctx := context.Background()
	k := s.d.keys(thread)
	names := append(k.fixed(), s.d.threadsKey())
	ws, err := s.d.rdb.ZRange(ctx, k.wk, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ws {
		ns, id, _ := splitPair(m)
		names = append(names, k.writes(ns, id))
	}
	out := map[string][]string{}
	for _, key := range names {
		typ, err := s.d.rdb.Type(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		var vals []string
		switch typ {
		case "hash":
			m, err := s.d.rdb.HGetAll(ctx, key).Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range slices.Sorted(maps.Keys(m)) {
				vals = append(vals, f, m[f])
			}
		case "zset":
			if vals, err = s.d.rdb.ZRange(ctx, key, 0, -1).Result(); err != nil {
				t.Fatal(err)
			}
		case "none":
		default:
			t.Fatalf("%s: type %s", key, typ)
		}
		out[key] = append([]string{typ}, vals...)
	}
	return out
}
