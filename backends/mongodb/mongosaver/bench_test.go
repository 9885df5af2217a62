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
