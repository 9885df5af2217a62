package mongosaver_test

import (
	"context"
	"testing"

	"github.com/memvault/memvault/backends/mongodb/mongosaver"
	"github.com/memvault/memvault/checkpointer"
)

// TestSampleConfig: SampleConfig finds nothing in an empty collection and
// a stored thread's namespace otherwise: where vault's key check at Open
// reads a value, instead of listing every thread (which read every
// checkpoint document's ids).
func TestSampleConfig(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSaver(t, mongosaver.Options{})
	if cfg, err := s.SampleConfig(ctx); err != nil || cfg != nil {
		t.Fatalf("SampleConfig of an empty collection = %v, %v; want nil, nil", cfg, err)
	}
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"n": int64(1)},
		ChannelVersions: map[string]string{"n": s.NextVersion("")}}
	if _, err := s.Put(ctx, checkpointer.Config{ThreadID: "t", CheckpointNS: "sub"}, cp, nil, cp.ChannelVersions); err != nil {
		t.Fatal(err)
	}
	cfg, err := s.SampleConfig(ctx)
	if err != nil || cfg == nil || cfg.ThreadID != "t" || cfg.CheckpointNS != "sub" || cfg.CheckpointID != "" {
		t.Fatalf("SampleConfig = %+v, %v; want thread t, namespace sub, no checkpoint id", cfg, err)
	}
}
