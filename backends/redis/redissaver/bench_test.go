package redissaver_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/backends/redis/redissaver"
	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/checkpointer"
)

// BenchmarkSaver measures a put (continuing the previous checkpoint, one
// new value), a put of one pending write, a read of the latest checkpoint
// and a list of 10, one call at a time on the shared Redis 8 server, and
// beside them a raw baseline: one HSET and one HGET of a 1 KiB value
// through the same client, without memvault.
func BenchmarkSaver(b *testing.B) {
	srv := redistest.Shared(b, 8)
	rdb := srv.Client(b)
	s, err := redissaver.New(rdb, redissaver.Options{Prefix: redistest.Prefix()})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	payload := make([]byte, 1024)
	cfg := checkpointer.Config{ThreadID: "bench"}
	v := ""
	put := func(n int) {
		v = s.NextVersion(v)
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(n), ChannelValues: map[string]any{"msg": string(payload)},
			ChannelVersions: map[string]string{"msg": v}}
		next, err := s.Put(ctx, cfg, cp, checkpointer.Metadata{"step": n}, cp.ChannelVersions)
		if err != nil {
			b.Fatal(err)
		}
		cfg = next
	}
	for n := range 20 {
		put(n)
	}
	b.Run("put", func(b *testing.B) {
		defer serverTime(b, rdb)()
		for n := 0; b.Loop(); n++ {
			put(100 + n)
		}
	})
	// The writes go to a checkpoint of their own, so that the reads
	// below do not carry them.
	wcfg := checkpointer.Config{ThreadID: "bench-writes"}
	wcp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{}, ChannelVersions: map[string]string{}}
	if wcfg, err = s.Put(ctx, wcfg, wcp, checkpointer.Metadata{}, nil); err != nil {
		b.Fatal(err)
	}
	b.Run("put_writes", func(b *testing.B) {
		defer serverTime(b, rdb)()
		for n := 0; b.Loop(); n++ {
			if err := s.PutWrites(ctx, wcfg, []checkpointer.Write{{Channel: "out", Value: string(payload)}}, fmt.Sprint("task", n), ""); err != nil {
				b.Fatal(err)
			}
		}
	})
	latest := checkpointer.Config{ThreadID: "bench"}
	b.Run("get_tuple", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.GetTuple(ctx, latest); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("list10", func(b *testing.B) {
		for b.Loop() {
			for _, err := range s.List(ctx, &latest, checkpointer.ListOptions{Limit: 10}) {
				if err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	key := redistest.Prefix() + ":raw"
	b.Run("raw_hset", func(b *testing.B) {
		defer serverTime(b, rdb)()
		for n := 0; b.Loop(); n++ {
			if err := rdb.HSet(ctx, key, fmt.Sprint(n), payload).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("raw_hget", func(b *testing.B) {
		for b.Loop() {
			if err := rdb.HGet(ctx, key, "0").Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// serverTime resets the server's command statistics and returns a func
// reporting the server's time per op (INFO commandstats), a figure the
// machine's load disturbs less than wall time: the scripts' time
// (script-µs/op; the commands a script calls count in it, and again on
// their own lines, which are left out), else every command's.
func serverTime(b *testing.B, rdb *redis.Client) func() {
	ctx := context.Background()
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		b.Fatal(err)
	}
	return func() {
		info, err := rdb.Info(ctx, "commandstats").Result()
		if err != nil {
			b.Fatal(err)
		}
		if os.Getenv("MEMVAULT_BENCH_COMMANDSTATS") != "" {
			b.Log(info)
		}
		var script, all float64
		for _, line := range strings.Split(info, "\n") {
			name, rest, ok := strings.Cut(line, ":calls=")
			if !ok || name == "cmdstat_config|resetstat" || name == "cmdstat_info" {
				continue
			}
			_, rest, _ = strings.Cut(rest, "usec=")
			v, _, _ := strings.Cut(rest, ",")
			f, _ := strconv.ParseFloat(v, 64)
			all += f
			if name == "cmdstat_eval" || name == "cmdstat_evalsha" {
				script += f
			}
		}
		if script > 0 {
			b.ReportMetric(script/float64(b.N), "script-µs/op")
		} else {
			b.ReportMetric(all/float64(b.N), "server-µs/op")
		}
	}
}
