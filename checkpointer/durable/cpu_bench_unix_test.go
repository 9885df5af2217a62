//go:build unix

package durable_test

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/durable"
	"github.com/memvault/memvault/checkpointer/memsaver"
	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/serde"
)

// cpuTime is the CPU the process has used, user and system, every
// goroutine's.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPutCPU measures the CPU one put costs (cpu-ns/op: the
// process's, the queue's writer included, by getrusage) on an encrypting
// in-memory saver — no storage I/O, so the figure is checking, encoding,
// sealing and copying — directly ("raw") and through the decorator in
// Async mode, whose difference is the decorator's own work: checking
// before it queues that every new value encodes, and copying the put.
// Each put continues the last with a ~1 KiB message list and a small
// status, as a graph step does.
func BenchmarkPutCPU(b *testing.B) {
	key, err := crypto.ParseKey("0123456789abcdef0123456789abcdef")
	if err != nil {
		b.Fatal(err)
	}
	ring, err := crypto.NewKeyring(key)
	if err != nil {
		b.Fatal(err)
	}
	ser, err := serde.NewEncrypted(nil, ring)
	if err != nil {
		b.Fatal(err)
	}
	messages := make([]any, 8)
	for i := range messages {
		messages[i] = map[string]any{"role": "user", "content": strings.Repeat("lorem ipsum ", 10), "n": int64(i)}
	}
	for _, name := range []string{"raw", "async"} {
		b.Run(name, func(b *testing.B) {
			mem, err := memsaver.New(memsaver.Options{})
			if err != nil {
				b.Fatal(err)
			}
			var sv checkpointer.Saver = mem.WithSerde(ser)
			var d *durable.Saver
			if name == "async" {
				d = wrap(b, sv, durable.Options{Mode: durable.Async})
				sv = d
			}
			ctx := b.Context()
			cfg := checkpointer.Config{ThreadID: "cpu"}
			versions := map[string]string{}
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime(b)
			for i := range b.N {
				nv := map[string]string{"messages": sv.NextVersion(versions["messages"]), "status": sv.NextVersion(versions["status"])}
				versions = nv
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i),
					ChannelValues:   map[string]any{"messages": messages, "status": "step"},
					ChannelVersions: versions, VersionsSeen: map[string]map[string]string{}}
				if cfg, err = sv.Put(ctx, cfg, cp, checkpointer.Metadata{"step": i}, nv); err != nil {
					b.Fatal(err)
				}
			}
			if d != nil {
				if err := d.Flush(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
