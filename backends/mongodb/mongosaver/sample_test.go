package mongosaver_test

import (
	"context"
	"testing"

	"github.com/memvault/memvault/backends/mongodb/mongosaver"
	"github.com/memvault/memvault/checkpointer"
)

// TestSampleConfig: SampleConfig finds nothing in an empty collection and
// otherwise a namespace of the first thread after the one given: where vault's key check at Open
// reads a value, instead of listing every thread (which read every
// checkpoint document's ids).
func TestSampleConfig(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSaver(t, mongosaver.Options{})
	if cfg, err := s.SampleConfig(ctx, ""); err != nil || cfg != nil {
		t.Fatalf("SampleConfig of an empty collection = %v, %v; want nil, nil", cfg, err)
	}
	for _, th := range []string{"u", "t"} {
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"n": int64(1)},
			ChannelVersions: map[string]string{"n": s.NextVersion("")}}
		if _, err := s.Put(ctx, checkpointer.Config{ThreadID: th, CheckpointNS: "sub"}, cp, nil, cp.ChannelVersions); err != nil {
			t.Fatal(err)
		}
	}
	for after, want := range map[string]string{"": "t", "t": "u", "u": ""} {
		cfg, err := s.SampleConfig(ctx, after)
		if want == "" {
			if err != nil || cfg != nil {
				t.Fatalf("SampleConfig after %q = %+v, %v; want none", after, cfg, err)
			}
			continue
		}
		if err != nil || cfg == nil || cfg.ThreadID != want || cfg.CheckpointNS != "sub" || cfg.CheckpointID != "" {
			t.Fatalf("SampleConfig after %q = %+v, %v; want thread %s, namespace sub, no checkpoint id", after, cfg, err, want)
		}
	}
}
