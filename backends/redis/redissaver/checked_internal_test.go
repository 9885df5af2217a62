package redissaver

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/checkpointertest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
)

// checkedSaver is a Saver whose every put and pending writes take the
// large path (a MULTI: EVAL of a check, then plain writes; see bigPut).
func checkedSaver(t testing.TB, rdb redis.UniversalClient, opt Options) *Saver {
	t.Helper()
	opt.Prefix = redistest.Prefix()
	s, err := New(rdb, opt)
	if err != nil {
		t.Fatal(err)
	}
	s.d.bigPut, s.d.bigWrites = -1, -1
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestConformanceLarge: the conformance suite with every put and pending
// writes on the large path, on both servers, plaintext and with
// per-subject keys (fenced writes), and on a cluster.
func TestConformanceLarge(t *testing.T) {
	for _, v := range redistest.Versions {
		t.Run(fmt.Sprintf("redis%d", v), func(t *testing.T) {
			t.Parallel()
			rdb := redistest.Shared(t, v).Client(t)
			t.Run("plaintext", func(t *testing.T) {
				checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver { return checkedSaver(t, rdb, Options{}) })
			})
			t.Run("subjects", func(t *testing.T) {
				checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
					return checkedSaver(t, rdb, Options{Serde: testkeys.Subjects(t)})
				})
			})
		})
	}
	t.Run("cluster8", func(t *testing.T) {
		t.Parallel()
		rdb := redistest.StartCluster(t, 8).Client(t)
		checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver { return checkedSaver(t, rdb, Options{}) })
	})
}

// TestRefusedLargeWriteLeavesNothing: a large put or pending writes whose
// check refuses — the thread locked by another operation (LOCKED), a
// lease run out (LOST), the erasure fence moved (FENCED), the parent gone
// (MISSING) — changes nothing: the values and writes the MULTI carried
// after the check fail on the poisoned key, which is back as it was, and
// no hold key remains; on a thread holding data and on one holding none,
// on both servers.
func TestRefusedLargeWriteLeavesNothing(t *testing.T) {
	for _, v := range redistest.Versions {
		t.Run(fmt.Sprintf("redis%d", v), func(t *testing.T) {
			ctx := context.Background()
			rdb := redistest.Shared(t, v).Client(t)
			s := checkedSaver(t, rdb, Options{})
			d := s.d
			big := strings.Repeat("v", 100)
			cfg, err := s.Put(ctx, checkpointer.Config{ThreadID: "full"}, newValues(s, 0, big), nil, map[string]string{"a": "1", "b": "1"})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "w", Value: big}}, "task", ""); err != nil {
				t.Fatal(err)
			}
			for _, thread := range []string{"full", "empty"} {
				k := d.keys(thread)
				put := func(parent string, needs bool) *batch {
					p := &checkpointer.PutRows{Thread: thread, ID: checkpointer.NewID(9), Parent: parent, NeedsParent: needs, V: 4,
						Type: "json", Doc: []byte(`{"v":4}`), Meta: []byte(`{}`), Versions: map[string]string{"a": "9", "b": "9"},
						Values: []checkpointer.ValueRow{{Channel: "a", Version: "9", Type: "json", Data: []byte(`"new a"`)},
							{Channel: "b", Version: "9", Type: "json", Data: []byte(`"new b"`)}}}
					b, _, err := d.putBatch(p)
					if err != nil {
						t.Fatal(err)
					}
					return b
				}
				writes := func(upsert bool) *batch {
					return d.writesBatch(&checkpointer.WriteRows{Thread: thread, Checkpoint: cfg.CheckpointID, Task: "task2", Upsert: upsert,
						Rows: []checkpointer.WriteRow{{Idx: 0, Channel: "w", Type: "json", Data: []byte(`"new w"`)},
							{Idx: 1, Channel: "x", Type: "json", Data: []byte(`"new x"`)}}})
				}
				fenced := func(b *batch) *batch {
					b.fence(d.fc.key(d.fc.slot(k)), "12345")
					return b
				}
				before := snapshotAll(t, s, thread)
				for _, c := range []struct {
					name, token, lock, want string
					b                       *batch
				}{
					{"put locked", "", "other", replyLocked, put("", false)},
					{"put lost", "mine", "", replyLost, put("", false)},
					{"put lost to another", "mine", "other", replyLost, put("", false)},
					{"put fenced", "", "", replyFenced, fenced(put("", false))},
					{"put missing", "", "", replyMissing, put("gone", true)},
					{"writes locked", "", "other", replyLocked, writes(false)},
					{"upserts locked", "", "other", replyLocked, writes(true)},
					{"writes lost", "mine", "", replyLost, writes(false)},
					{"writes fenced", "", "", replyFenced, fenced(writes(true))},
				} {
					if c.b.check == "" {
						t.Fatalf("%s: not on the large path", c.name)
					}
					if c.lock != "" {
						if err := rdb.Set(ctx, k.lock, c.lock, time.Minute).Err(); err != nil {
							t.Fatal(err)
						}
					}
					r, err := d.run(ctx, c.token, c.b)
					if err != nil || !strings.HasPrefix(r, c.want) {
						t.Fatalf("%s on thread %q: %q, %v; want %s", c.name, thread, r, err, c.want)
					}
					if err := rdb.Del(ctx, k.lock).Err(); err != nil {
						t.Fatal(err)
					}
					if after := snapshotAll(t, s, thread); !maps.EqualFunc(before, after, slices.Equal) {
						t.Fatalf("%s on thread %q changed it:\nbefore %q\nafter  %q", c.name, thread, before, after)
					}
				}
			}
		})
	}
}

// TestLargeWriteAfterScriptFlush: with the server's script cache empty
// (a restart, a failover, SCRIPT FLUSH), a large put's check still runs
// (EVAL, not EVALSHA, whose NOSCRIPT inside MULTI would leave the writes
// after it unchecked): a put whose parent is gone stores nothing, and a
// put and pending writes that pass are stored, on both servers.
func TestLargeWriteAfterScriptFlush(t *testing.T) {
	for _, v := range redistest.Versions {
		t.Run(fmt.Sprintf("redis%d", v), func(t *testing.T) {
			ctx := context.Background()
			rdb := redistest.Shared(t, v).Client(t)
			s := checkedSaver(t, rdb, Options{})
			if err := rdb.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			gone := checkpointer.Config{ThreadID: "t", CheckpointID: checkpointer.NewID(0)}
			// Channel b inherited: the put needs its parent.
			_, err := s.Put(ctx, gone, newValues(s, 1, "x"), nil, map[string]string{"a": "1"})
			if !errors.Is(err, checkpointer.ErrParentMissing) {
				t.Fatalf("a put after a missing parent: %v, want ErrParentMissing", err)
			}
			if n, err := rdb.Exists(ctx, s.d.keys("t").fixed()...).Result(); err != nil || n != 0 {
				t.Fatalf("the refused put left %d keys (%v)", n, err)
			}
			if err := rdb.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			cfg, err := s.Put(ctx, checkpointer.Config{ThreadID: "t"}, newValues(s, 2, "y"), nil, map[string]string{"a": "1", "b": "1"})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "w", Value: "z"}}, "task", ""); err != nil {
				t.Fatal(err)
			}
			tup, err := s.GetTuple(ctx, cfg)
			if err != nil || tup == nil || tup.Checkpoint.ChannelValues["a"] != "y" || len(tup.PendingWrites) != 1 {
				t.Fatalf("the put after SCRIPT FLUSH reads as %+v, %v", tup, err)
			}
		})
	}
}

// newValues is checkpoint n with channels a and b holding value.
func newValues(s *Saver, n int, value string) *checkpointer.Checkpoint {
	return &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(n), TS: time.Now(),
		ChannelValues: map[string]any{"a": value, "b": value}, ChannelVersions: map[string]string{"a": "1", "b": "1"}}
}

// snapshotAll is snapshotThread with the writes hashes of the test's
// checkpoints, the lock and every hold key (which must not exist).
func snapshotAll(t *testing.T, s *Saver, thread string) map[string][]string {
	t.Helper()
	ctx := context.Background()
	out := snapshotThread(t, s, thread)
	k := s.d.keys(thread)
	holds := []string{k.lock}
	for _, key := range append(k.fixed(), k.lock) {
		holds = append(holds, key+sep)
	}
	keys, err := s.d.rdb.Keys(ctx, s.d.prefix+":{"+thread+"}:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range append(keys, holds...) {
		if _, ok := out[key]; ok {
			continue
		}
		typ, err := s.d.rdb.Type(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		out[key] = []string{typ}
		if typ == "hash" {
			m, err := s.d.rdb.HGetAll(ctx, key).Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range slices.Sorted(maps.Keys(m)) {
				out[key] = append(out[key], f, m[f])
			}
		}
	}
	return out
}

// txRecorder keeps the commands of every MULTI/EXEC whose first command
// is an EVAL of a check script, as sent.
type txRecorder struct {
	mu  sync.Mutex
	txs [][][]any
}

func (r *txRecorder) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *txRecorder) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (r *txRecorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 2 && cmds[0].Name() == "multi" {
			if a := cmds[1].Args(); len(a) > 1 && a[0] == "eval" && (a[1] == putCheckLua || a[1] == writesCheckLua) {
				var tx [][]any
				for _, c := range cmds[1 : len(cmds)-1] {
					tx = append(tx, slices.Clone(c.Args()))
				}
				r.mu.Lock()
				r.txs = append(r.txs, tx)
				r.mu.Unlock()
			}
		}
		return next(ctx, cmds)
	}
}

// TestLargePutSentAgain is TestPutSentAgain on the large path: a put's
// and a pending write's MULTI/EXEC sent again after they were applied —
// and after the thread moved on — reply OK and change nothing (the check
// passes again, its writes and the plain HSETNX and HSET are idempotent),
// on both servers.
func TestLargePutSentAgain(t *testing.T) {
	for _, v := range redistest.Versions {
		t.Run(fmt.Sprintf("redis%d", v), func(t *testing.T) {
			ctx := context.Background()
			rdb := redistest.Shared(t, v).Client(t)
			rec := &txRecorder{}
			rdb.AddHook(rec)
			s := checkedSaver(t, rdb, Options{})
			cfg := checkpointer.Config{ThreadID: "t"}
			ver := ""
			var second checkpointer.Config
			for n := range 3 {
				ver = s.NextVersion(ver)
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(n),
					ChannelValues: map[string]any{"n": float64(n)}, ChannelVersions: map[string]string{"n": ver}}
				var err error
				if cfg, err = s.Put(ctx, cfg, cp, checkpointer.Metadata{"step": n}, cp.ChannelVersions); err != nil {
					t.Fatal(err)
				}
				if n == 1 {
					second = cfg
				}
				ws := []checkpointer.Write{{Channel: "out", Value: float64(n)}, {Channel: checkpointer.ChannelError, Value: "e"}}
				if err := s.PutWrites(ctx, cfg, ws[:1], "task", ""); err != nil {
					t.Fatal(err)
				}
				if err := s.PutWrites(ctx, cfg, ws[1:], "task", ""); err != nil {
					t.Fatal(err)
				}
			}
			rec.mu.Lock()
			sent := slices.Clone(rec.txs)
			rec.mu.Unlock()
			if len(sent) != 9 {
				t.Fatalf("%d transactions recorded for 3 puts and 6 writes", len(sent))
			}
			before := snapshotThread(t, s, "t")
			for i, tx := range sent {
				var check *redis.Cmd
				if _, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
					check = p.Do(ctx, tx[0]...)
					for _, a := range tx[1:] {
						p.Do(ctx, a...)
					}
					return nil
				}); err != nil && !strings.Contains(err.Error(), "no such key") {
					t.Fatalf("transaction %d sent again: %v", i, err)
				}
				if r, err := check.Text(); err != nil || r != replyOK {
					t.Fatalf("transaction %d sent again: %q, %v; want OK", i, r, err)
				}
			}
			if after := snapshotThread(t, s, "t"); !maps.EqualFunc(before, after, slices.Equal) {
				t.Fatalf("the transactions sent again changed the thread:\nbefore %q\nafter  %q", before, after)
			}
			tup, err := s.GetTuple(ctx, second)
			if err != nil || tup == nil || tup.Checkpoint.ChannelValues["n"] != float64(1) || len(tup.PendingWrites) != 2 || tup.ParentConfig == nil {
				t.Fatalf("checkpoint 1 after the transactions sent again: %+v, %v", tup, err)
			}
		})
	}
}

// TestRefusedLargeWriteCluster: on a Redis 7 and a Redis 8 cluster, a
// refused large put and pending writes (the check renames and poisons
// keys it was not given, in its thread's slot) leave the thread's values
// and writes as they were, and no hold key.
func TestRefusedLargeWriteCluster(t *testing.T) {
	for _, v := range redistest.Versions {
		t.Run(fmt.Sprintf("redis%d", v), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			rdb := redistest.StartCluster(t, v).Client(t)
			s := checkedSaver(t, rdb, Options{})
			cfg, err := s.Put(ctx, checkpointer.Config{ThreadID: "t"}, newValues(s, 0, "old"), nil, map[string]string{"a": "1", "b": "1"})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "w", Value: "old"}}, "task", ""); err != nil {
				t.Fatal(err)
			}
			k := s.d.keys("t")
			wk := k.writes("", cfg.CheckpointID)
			read := func() []map[string]string {
				var out []map[string]string
				for _, key := range []string{k.val, wk} {
					m, err := rdb.HGetAll(ctx, key).Result()
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, m)
				}
				return out
			}
			before := read()
			if err := rdb.Set(ctx, k.lock, "other", time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
			p := &checkpointer.PutRows{Thread: "t", ID: checkpointer.NewID(1), V: 4, Doc: []byte(`{"v":4}`), Meta: []byte(`{}`),
				Versions: map[string]string{"a": "2"}, Values: []checkpointer.ValueRow{{Channel: "a", Version: "2", Type: "json", Data: []byte(`"new"`)}}}
			b, _, err := s.d.putBatch(p)
			if err != nil {
				t.Fatal(err)
			}
			wb := s.d.writesBatch(&checkpointer.WriteRows{Thread: "t", Checkpoint: cfg.CheckpointID, Task: "task2",
				Rows: []checkpointer.WriteRow{{Idx: 0, Channel: "w", Type: "json", Data: []byte(`"new"`)}}})
			for _, b := range []*batch{b, wb} {
				if r, err := s.d.run(ctx, "", b); err != nil || r != replyLocked {
					t.Fatalf("a large write on a locked thread: %q, %v; want LOCKED", r, err)
				}
			}
			if after := read(); !slices.EqualFunc(before, after, maps.Equal) {
				t.Fatalf("the refused writes changed the thread: before %v, after %v", before, after)
			}
			if n, err := rdb.Exists(ctx, k.val+sep).Result(); err != nil || n != 0 {
				t.Fatalf("a hold key remains (%d, %v)", n, err)
			}
			if n, err := rdb.Exists(ctx, wk+sep).Result(); err != nil || n != 0 {
				t.Fatalf("a hold key remains (%d, %v)", n, err)
			}
		})
	}
}
