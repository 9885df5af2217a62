package core_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/internal/core"
	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/serde"
)

// BenchmarkEncode is the engine's client work of a put and of a
// put_writes at the shape of `memvault bench checkpointer` (and of
// redissaver's BenchmarkShape): 5 channels of ~1 KiB in all, 2 new per
// put, a run_id in the metadata; writes of 3 values. It is every
// backend's encoding — validation, the checkpoint document, the
// metadata, the values serialized (and sealed) — with no driver: what
// SQLite, PostgreSQL, MongoDB and Redis puts all pay before their
// storage's own work.
func BenchmarkEncode(b *testing.B) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 4)
	values := map[string]any{
		"messages": []any{map[string]any{"role": "user", "content": text}, map[string]any{"role": "assistant", "content": text}},
		"context":  map[string]any{"user_id": "u-123", "plan": "premium", "notes": text},
		"summary":  text,
		"step":     int64(7),
		"scratch":  map[string]any{"tool": "lookup", "args": map[string]any{"invoice": "INV-1042"}, "result": text},
	}
	first := fmt.Sprintf("%032d.%016d", 1, 0)
	ctx := context.Background()
	for _, mode := range []string{"plaintext", "encrypted"} {
		var ser serde.Serializer = serde.JSONPlus{}
		if mode == "encrypted" {
			ser = testkeys.Encrypting(b)
		}
		c := binding.New(ser)
		b.Run(mode+"/put", func(b *testing.B) {
			defer cpuPerOp(b)()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				next := fmt.Sprintf("%032d.%016d", i+1, i)
				vers := map[string]string{"messages": next, "scratch": next, "context": first, "summary": first, "step": first}
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), TS: time.Now().UTC(), ChannelValues: values,
					ChannelVersions: vers, VersionsSeen: map[string]map[string]string{"agent": vers},
					UpdatedChannels: []string{"messages", "scratch"}}
				nv := map[string]string{"messages": next, "scratch": next}
				md := checkpointer.Metadata{"source": "loop", "step": i, "run_id": "bench"}
				cfg := checkpointer.Config{ThreadID: fmt.Sprintf("put-%d", i%64)}
				if _, err := core.Put(ctx, c, checkpointer.VersionString, cfg, cp, md, nv, true); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(mode+"/put_writes", func(b *testing.B) {
			ws := []checkpointer.Write{{Channel: "messages", Value: values["messages"]}, {Channel: "scratch", Value: values["scratch"]},
				{Channel: "summary", Value: values["summary"]}}
			defer cpuPerOp(b)()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				cfg := checkpointer.Config{ThreadID: fmt.Sprintf("w-%d", i%64), CheckpointID: "1f0c0000-0000-6000-8000-000000000000"}
				if _, err := core.PutWrites(ctx, c, cfg, ws, fmt.Sprintf("task-%d", i), ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// cpuPerOp returns a func reporting the process's CPU time per op since
// the call (cpu-µs/op).
func cpuPerOp(b *testing.B) func() {
	start := cpuTime()
	return func() {
		b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
	}
}
