package redissaver_test

import (
	"context"
	"fmt"
	"testing"

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
