package redissaver_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memvault/memvault/backends/redis/redissaver"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/serde"
)

// BenchmarkShape runs the put and put_writes of `memvault bench
// checkpointer` (5 channels of ~1 KiB in all, 2 new per put, a run_id in
// the metadata; writes of 3 values) one at a time, plaintext and
// encrypted, so that a CPU profile of this benchmark is the profile of
// those rows' client work.
func BenchmarkShape(b *testing.B) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 4)
	values := map[string]any{
		"messages": []any{map[string]any{"role": "user", "content": text}, map[string]any{"role": "assistant", "content": text}},
		"context":  map[string]any{"user_id": "u-123", "plan": "premium", "notes": text},
		"summary":  text,
		"step":     int64(7),
		"scratch":  map[string]any{"tool": "lookup", "args": map[string]any{"invoice": "INV-1042"}, "result": text},
	}
	versions := func(i int) map[string]string {
		next := fmt.Sprintf("%032d.%016d", i+1, i)
		first := fmt.Sprintf("%032d.%016d", 1, 0)
		return map[string]string{"messages": next, "scratch": next, "context": first, "summary": first, "step": first}
	}
	// Cancellable, as the CLI bench's (a context that can end makes
	// every call wait for its command in a goroutine: see await).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// "+goroutine": with Options.ReturnOnCancel.
	for _, mode := range []string{"plaintext", "encrypted", "plaintext+goroutine", "encrypted+goroutine"} {
		var ser serde.Serializer = serde.JSONPlus{}
		if strings.HasPrefix(mode, "encrypted") {
			ser = testkeys.Encrypting(b)
		}
		s := newSaver(b, 8, redissaver.Options{Serde: ser, ReturnOnCancel: strings.HasSuffix(mode, "+goroutine")})
		b.Run(mode+"/put", func(b *testing.B) {
			defer clientCPU(b)()
			for i := 0; b.Loop(); i++ {
				vers := versions(i)
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), TS: time.Now().UTC(), ChannelValues: values,
					ChannelVersions: vers, VersionsSeen: map[string]map[string]string{"agent": vers},
					UpdatedChannels: []string{"messages", "scratch"}}
				nv := map[string]string{"messages": vers["messages"], "scratch": vers["scratch"]}
				md := checkpointer.Metadata{"source": "loop", "step": i, "run_id": "bench"}
				if _, err := s.Put(ctx, checkpointer.Config{ThreadID: fmt.Sprintf("put-%d", i%64)}, cp, md, nv); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(mode+"/put_writes", func(b *testing.B) {
			ws := []checkpointer.Write{{Channel: "messages", Value: values["messages"]}, {Channel: "scratch", Value: values["scratch"]},
				{Channel: "summary", Value: values["summary"]}}
			defer clientCPU(b)()
			for i := 0; b.Loop(); i++ {
				cfg := checkpointer.Config{ThreadID: fmt.Sprintf("w-%d", i%64), CheckpointID: "1f0c0000-0000-6000-8000-000000000000"}
				if err := s.PutWrites(ctx, cfg, ws, fmt.Sprintf("task-%d", i), ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// clientCPU returns a func reporting this process's CPU time (user and
// system, every goroutine's, the garbage collector's included) per op
// since the call: the client's cost of an operation, which the server's
// time and the round trip do not disturb.
func clientCPU(b *testing.B) func() {
	start := cpuNow()
	return func() {
		b.ReportMetric(float64((cpuNow()-start).Microseconds())/float64(b.N), "cpu-µs/op")
	}
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
