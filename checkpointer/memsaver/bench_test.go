package memsaver_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/memsaver"
	"github.com/memvault/memvault/serde"
)

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

// fill stores n checkpoints on one thread, each changing "counter" and
// "messages", and returns the config of the last.
func fill(b *testing.B, s checkpointer.Saver, thread string, n int) checkpointer.Config {
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
		cfg, err = s.Put(ctx, cfg, cp, checkpointer.Metadata{"source": "loop", "step": i}, nv)
		if err != nil {
			b.Fatal(err)
		}
	}
	return cfg
}

// BenchmarkBaselineSerde is the serializer alone: dumping and loading the
// two changed channels of one step, what Put plus GetTuple cannot avoid.
func BenchmarkBaselineSerde(b *testing.B) {
	st := benchState(1)
	var s serde.JSONPlus
	b.ReportAllocs()
	for b.Loop() {
		for _, ch := range []string{"messages", "counter"} {
			typ, data, err := s.DumpsTyped(st[ch])
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.LoadsTyped(typ, data); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkPut stores one step (two changed channels of three) per op.
func BenchmarkPut(b *testing.B) {
	s := mustNew(b, memsaver.Options{})
	ctx := context.Background()
	cfg := checkpointer.Config{ThreadID: "bench"}
	st := benchState(1)
	versions := map[string]string{"user": "1", "counter": "1", "messages": "1"}
	md := checkpointer.Metadata{"source": "loop", "step": 1}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		v := fmt.Sprint(i)
		versions["counter"], versions["messages"] = v, v
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), ChannelValues: st, ChannelVersions: versions}
		var err error
		if cfg, err = s.Put(ctx, cfg, cp, md, map[string]string{"counter": v, "messages": v}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetTuple loads the latest of 100 checkpoints (three channels,
// one written by the first checkpoint).
func BenchmarkGetTuple(b *testing.B) {
	s := mustNew(b, memsaver.Options{})
	fill(b, s, "bench", 100)
	ctx := context.Background()
	cfg := checkpointer.Config{ThreadID: "bench"}
	b.ReportAllocs()
	for b.Loop() {
		t, err := s.GetTuple(ctx, cfg)
		if err != nil || t == nil {
			b.Fatal(t, err)
		}
	}
}

// BenchmarkList10 lists the 10 newest of 100 checkpoints.
func BenchmarkList10(b *testing.B) {
	s := mustNew(b, memsaver.Options{})
	fill(b, s, "bench", 100)
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
}
