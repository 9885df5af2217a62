package mongosaver_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/memvault/memvault/backends/mongodb/mongosaver"
	"github.com/memvault/memvault/checkpointer"
)

// BenchmarkPut measures a put continuing a thread, with the per-thread
// lease (two more round trips) and without (Options.NoLeases).
func BenchmarkPut(b *testing.B) {
	for _, c := range []struct {
		name string
		opt  mongosaver.Options
	}{{"leases", mongosaver.Options{}}, {"noleases", mongosaver.Options{NoLeases: true}}} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			s := newSaver(b, c.opt)
			cfg := checkpointer.Config{ThreadID: "bench"}
			v := ""
			msgs := []any{}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				v = s.NextVersion(v)
				msgs = append(msgs[:min(len(msgs), 20):min(len(msgs), 20)], fmt.Sprintf("message %d", i))
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), TS: time.Now(),
					ChannelValues: map[string]any{"messages": msgs}, ChannelVersions: map[string]string{"messages": v}}
				next, err := s.Put(ctx, cfg, cp, checkpointer.Metadata{"step": i}, map[string]string{"messages": v})
				if err != nil {
					b.Fatal(err)
				}
				cfg = next
			}
		})
	}
}

// BenchmarkGetTuple reads the latest checkpoint of a thread holding 20
// messages of 200 bytes, with a pending write.
func BenchmarkGetTuple(b *testing.B) {
	ctx := context.Background()
	s := newSaver(b, mongosaver.Options{})
	msgs := make([]any, 20)
	for i := range msgs {
		msgs[i] = map[string]any{"role": "user", "content": fmt.Sprintf("%0200d", i)}
	}
	v := s.NextVersion("")
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
		ChannelValues: map[string]any{"messages": msgs, "step": 3}, ChannelVersions: map[string]string{"messages": v, "step": v}}
	cfg, err := s.Put(ctx, checkpointer.Config{ThreadID: "read"}, cp, checkpointer.Metadata{"step": 3}, cp.ChannelVersions)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "messages", Value: "w"}}, "task", ""); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if tu, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "read"}); err != nil || len(tu.Checkpoint.ChannelValues["messages"].([]any)) != 20 {
			b.Fatal(tu, err)
		}
	}
}
