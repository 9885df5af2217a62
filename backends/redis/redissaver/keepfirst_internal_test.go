package redissaver

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/checkpointer"
)

// commandCalls is the server's count of calls of each command since the
// last CONFIG RESETSTAT (INFO commandstats), by lower-case name.
func commandCalls(t *testing.T, rdb *redis.Client) map[string]int {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]int{}
	for line := range strings.Lines(info) {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		name, ok2 := strings.CutPrefix(name, "cmdstat_")
		if !ok || !ok2 {
			continue
		}
		v, _, _ := strings.Cut(strings.TrimPrefix(rest, "calls="), ",")
		calls[name], _ = strconv.Atoi(v)
	}
	return calls
}

// TestKeepFirstOneCommand: on Redis 8 a put's new values and a task's
// pending writes kept first go in one HSETEX FNX instead of one HSETNX
// each (before: a put of 3 values made 3 HSETNX calls in its script, 3
// writes 3 more), and keep HSETNX's rule on both servers: a value or
// write already stored keeps its bytes while the others of the same call
// are stored, and a field named twice in one call keeps its first value.
func TestKeepFirstOneCommand(t *testing.T) {
	for _, v := range redistest.Versions {
		t.Run(fmt.Sprintf("redis%d", v), func(t *testing.T) {
			ctx := context.Background()
			srv := redistest.StartT(t, redistest.Options{Version: v})
			rdb := srv.Client(t)
			s, err := New(rdb, Options{Prefix: "kf"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			d := s.d
			vers := map[string]string{"a": "1", "b": "1", "c": "1"}
			cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0),
				ChannelValues: map[string]any{"a": "A1", "b": "B1", "c": "C1"}, ChannelVersions: vers}
			if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			cfg, err := s.Put(ctx, checkpointer.Config{ThreadID: "t"}, cp, nil, vers)
			if err != nil {
				t.Fatal(err)
			}
			// One HSETNX is the parent record's, kept first too.
			calls := commandCalls(t, rdb)
			wantNX, wantEX := 4, 0
			if v >= 8 {
				wantNX, wantEX = 1, 1
			}
			if calls["hsetnx"] != wantNX || calls["hsetex"] != wantEX {
				t.Fatalf("a put of 3 new values: %d HSETNX and %d HSETEX, want %d and %d", calls["hsetnx"], calls["hsetex"], wantNX, wantEX)
			}

			// A value stored before (by another writer) keeps its bytes;
			// the put's other new value is stored.
			k := d.keys("t")
			if err := rdb.HSet(ctx, k.val, valField("", "a", "2"), "stored first").Err(); err != nil {
				t.Fatal(err)
			}
			vers2 := map[string]string{"a": "2", "b": "2", "c": "1"}
			cp2 := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(1),
				ChannelValues: map[string]any{"a": "A2", "b": "B2", "c": "C1"}, ChannelVersions: vers2}
			if _, err := s.Put(ctx, cfg, cp2, nil, map[string]string{"a": "2", "b": "2"}); err != nil {
				t.Fatal(err)
			}
			got, err := rdb.HMGet(ctx, k.val, valField("", "a", "2"), valField("", "b", "2")).Result()
			if err != nil {
				t.Fatal(err)
			}
			if got[0] != "stored first" || got[1] == nil {
				t.Fatalf("values after a put over a stored one: %q", got)
			}
			if b, _ := got[1].(string); !strings.Contains(b, "B2") {
				t.Fatalf("the put's new value b is %q, want B2's record", b)
			}

			// Pending writes: 3 kept first in one command on Redis 8; a
			// second call of the task keeps the first writes' bytes and
			// adds its new one.
			w := func(idx int, data string) checkpointer.WriteRow {
				return checkpointer.WriteRow{Task: "task", Idx: idx, Channel: "ch", Type: "json", Data: []byte(data)}
			}
			rows := &checkpointer.WriteRows{Thread: "t", Checkpoint: cfg.CheckpointID, Task: "task",
				Rows: []checkpointer.WriteRow{w(0, `"w0"`), w(1, `"w1"`), w(2, `"w2"`)}}
			if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			if err := d.putWrites(ctx, "", rows, nil); err != nil {
				t.Fatal(err)
			}
			calls = commandCalls(t, rdb)
			wantNX--
			if calls["hsetnx"] != wantNX || calls["hsetex"] != wantEX {
				t.Fatalf("3 pending writes: %d HSETNX and %d HSETEX, want %d and %d", calls["hsetnx"], calls["hsetex"], wantNX, wantEX)
			}
			again := &checkpointer.WriteRows{Thread: "t", Checkpoint: cfg.CheckpointID, Task: "task",
				Rows: []checkpointer.WriteRow{w(0, `"x0"`), w(3, `"x3"`)}}
			if err := d.putWrites(ctx, "", again, nil); err != nil {
				t.Fatal(err)
			}
			// A field twice in one call keeps the first (HSETNX's order).
			twice := &checkpointer.WriteRows{Thread: "t", Checkpoint: cfg.CheckpointID, Task: "task",
				Rows: []checkpointer.WriteRow{w(5, `"first"`), w(5, `"second"`)}}
			if err := d.putWrites(ctx, "", twice, nil); err != nil {
				t.Fatal(err)
			}
			stored, err := rdb.HGetAll(ctx, k.writes("", cfg.CheckpointID)).Result()
			if err != nil {
				t.Fatal(err)
			}
			rs, err := writeRows(stored)
			if err != nil {
				t.Fatal(err)
			}
			byIdx := map[int]string{}
			for _, r := range rs {
				byIdx[r.Idx] = string(r.Data)
			}
			want := map[int]string{0: `"w0"`, 1: `"w1"`, 2: `"w2"`, 3: `"x3"`, 5: `"first"`}
			if fmt.Sprint(byIdx) != fmt.Sprint(want) {
				t.Fatalf("stored writes %v, want %v", byIdx, want)
			}
		})
	}
}

// TestWritesIndexWithoutExists: on one server a task's pending writes
// index their thread by the reply of their ZADD to the checkpoints with
// writes (the checkpoint new there) rather than by an EXISTS of that set
// first (before: one EXISTS per call, 2 here); a thread holding only
// pending writes is indexed by its first, and stays indexed.
func TestWritesIndexWithoutExists(t *testing.T) {
	for _, v := range redistest.Versions {
		t.Run(fmt.Sprintf("redis%d", v), func(t *testing.T) {
			ctx := context.Background()
			srv := redistest.StartT(t, redistest.Options{Version: v})
			rdb := srv.Client(t)
			s, err := New(rdb, Options{Prefix: "wi"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			d := s.d
			if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			for i, task := range []string{"a", "b"} {
				rows := &checkpointer.WriteRows{Thread: "only-writes", Checkpoint: checkpointer.NewID(0), Task: task,
					Rows: []checkpointer.WriteRow{{Task: task, Channel: "ch", Type: "json", Data: []byte(`1`)}}}
				if err := d.putWrites(ctx, "", rows, nil); err != nil {
					t.Fatal(err)
				}
				if _, err := rdb.ZScore(ctx, d.threadsKey(), "only-writes").Result(); err != nil {
					t.Fatalf("after pending writes %d the thread is not indexed: %v", i, err)
				}
			}
			if n := commandCalls(t, rdb)["exists"]; n != 0 {
				t.Fatalf("2 pending writes made %d EXISTS calls, want 0", n)
			}
		})
	}
}
