package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/postgres"
)

func TestSmoke(t *testing.T) {
	ctx := context.Background()
	s, _ := newSaver(t, postgres.Options{})
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
		ChannelValues:   map[string]any{"a": "x", "b": []any{1.0, "two"}},
		ChannelVersions: map[string]string{"a": "1", "b": "1", "c": "1"},
		VersionsSeen:    map[string]map[string]string{"n": {"a": "1"}},
	}
	cfg, err := s.Put(ctx, checkpointer.Config{ThreadID: "t1"}, cp, checkpointer.Metadata{"step": 0}, map[string]string{"a": "1", "b": "1", "c": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "a", Value: "w"}, {Channel: "__error__", Value: nil}}, "task1", ""); err != nil {
		t.Fatal(err)
	}
	tu, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v %+v %+v", tu.Checkpoint, tu.Metadata, tu.PendingWrites)
	for tu, err := range s.List(ctx, nil, checkpointer.ListOptions{}) {
		t.Logf("%v %v", tu, err)
	}
}
