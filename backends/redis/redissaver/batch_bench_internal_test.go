package redissaver

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/checkpointer"
)

// BenchmarkBatch is the driver's record packing alone — a put's script
// call (putBatch) with its head cache entry, and a task's pending
// writes' (writesBatch) at the bench's shape, with no server: the
// client work of the Redis layout before go-redis writes the command.
func BenchmarkBatch(b *testing.B) {
	s, err := New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}), Options{})
	if err != nil {
		b.Fatal(err)
	}
	d := s.d
	d.single = true
	v := "00000000000000000000000000000002.0000000000000001"
	p := &checkpointer.PutRows{Thread: "put-7", ID: "1f0c0000-0000-6000-8000-000000000007", V: 4, Type: "json",
		Doc: make([]byte, 400), Meta: []byte(`{"run_id":"bench","source":"loop","step":7}`),
		Versions: map[string]string{"messages": v, "scratch": v, "context": v, "summary": v, "step": v},
		Values: []checkpointer.ValueRow{{Channel: "messages", Version: v, Type: "json", Data: make([]byte, 400)},
			{Channel: "scratch", Version: v, Type: "json", Data: make([]byte, 300)}}}
	w := &checkpointer.WriteRows{Thread: "w-7", Checkpoint: "1f0c0000-0000-6000-8000-000000000000", Task: "task-7",
		Rows: []checkpointer.WriteRow{{Idx: 0, Channel: "messages", Type: "json", Data: make([]byte, 400)},
			{Idx: 1, Channel: "scratch", Type: "json", Data: make([]byte, 300)}, {Idx: 2, Channel: "summary", Type: "json", Data: make([]byte, 200)}}}
	b.Run("put", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, h, err := d.putBatch(p)
			if err != nil {
				b.Fatal(err)
			}
			d.seen.put(p.Thread, ref{p.NS, p.ID}, h)
		}
	})
	b.Run("put_writes", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			d.writesBatch(w)
		}
	})
}
