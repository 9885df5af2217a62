package sqlitesaver

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/memsaver"
)

// Benchmarks run each operation on the SQLite saver (a WAL file in a temp
// directory, and ":memory:") next to the in-memory saver as the baseline.

type backend struct {
	name string
	open func(b *testing.B) checkpointer.Saver
}

var backends = []backend{
	{"memory", func(b *testing.B) checkpointer.Saver {
		s, err := memsaver.New(memsaver.Options{})
		if err != nil {
			b.Fatal(err)
		}
		return s
	}},
	{"sqlite-file", func(b *testing.B) checkpointer.Saver {
		return openSaver(b, filepath.Join(b.TempDir(), "bench.db"), Options{})
	}},
	// The file without SQLite's memory map, as a vault opens it (its
	// store shares the file).
	{"sqlite-file-nommap", func(b *testing.B) checkpointer.Saver {
		return openSaver(b, filepath.Join(b.TempDir(), "bench.db"), Options{NoMmap: true})
	}},
	{"sqlite-memory", func(b *testing.B) checkpointer.Saver { return openSaver(b, ":memory:", Options{}) }},
}

// benchState is a typical small graph state: a message list, a string and a
// counter.
func benchState(i int) map[string]any {
	return map[string]any{
		"messages": []any{
			map[string]any{"role": "user", "content": "What is the weather in Paris?"},
			map[string]any{"role": "assistant", "content": fmt.Sprintf("It is sunny (%d).", i)},
		},
		"user":    "ann",
		"counter": int64(i),
	}
}

// fillThread stores n checkpoints on one thread, each changing "counter" and
// "messages", with one pending write each, and returns the last config.
func fillThread(b *testing.B, s checkpointer.Saver, thread string, n int) checkpointer.Config {
	b.Helper()
	ctx := context.Background()
	cfg := checkpointer.Config{ThreadID: thread}
	versions := map[string]string{}
	for i := range n {
		nv := map[string]string{"counter": s.NextVersion(versions["counter"]), "messages": s.NextVersion(versions["messages"])}
		if i == 0 {
			nv["user"] = s.NextVersion("")
		}
		for k, v := range nv {
			versions[k] = v
		}
		cv := make(map[string]string, len(versions))
		for k, v := range versions {
			cv[k] = v
		}
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), ChannelValues: benchState(i), ChannelVersions: cv}
		var err error
		if cfg, err = s.Put(ctx, cfg, cp, checkpointer.Metadata{"source": "loop", "step": i}, nv); err != nil {
			b.Fatal(err)
		}
		if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "out", Value: i}}, "task", ""); err != nil {
			b.Fatal(err)
		}
	}
	return cfg
}

// BenchmarkPut stores one step (two changed channels of three) per op.
func BenchmarkPut(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			s := be.open(b)
			ctx := context.Background()
			cfg := checkpointer.Config{ThreadID: "bench"}
			st := benchState(1)
			md := checkpointer.Metadata{"source": "loop", "step": 1}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				v := fmt.Sprint(i)
				versions := map[string]string{"user": "1", "counter": v, "messages": v}
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), ChannelValues: st, ChannelVersions: versions}
				var err error
				if cfg, err = s.Put(ctx, cfg, cp, md, map[string]string{"counter": v, "messages": v}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGetTuple loads the latest of 100 checkpoints (three channels,
// one written by the first checkpoint, and a pending write).
func BenchmarkGetTuple(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			s := be.open(b)
			fillThread(b, s, "bench", 100)
			ctx := context.Background()
			cfg := checkpointer.Config{ThreadID: "bench"}
			b.ReportAllocs()
			for b.Loop() {
				t, err := s.GetTuple(ctx, cfg)
				if err != nil || t == nil {
					b.Fatal(t, err)
				}
			}
		})
	}
}

// BenchmarkList10 lists the 10 newest of 100 checkpoints.
func BenchmarkList10(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			s := be.open(b)
			fillThread(b, s, "bench", 100)
			ctx := context.Background()
			cfg := &checkpointer.Config{ThreadID: "bench"}
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				for _, err := range s.List(ctx, cfg, checkpointer.ListOptions{Limit: 10}) {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != 10 {
					b.Fatalf("listed %d", n)
				}
			}
		})
	}
}
