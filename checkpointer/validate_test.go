package checkpointer

import (
	"errors"
	"reflect"
	"testing"
)

func TestValidatePut(t *testing.T) {
	cp := &Checkpoint{ID: "id"}
	for _, tc := range []struct {
		cfg  Config
		cp   *Checkpoint
		want error
	}{
		{Config{ThreadID: "t"}, cp, nil},
		{Config{}, cp, ErrMissingThreadID},
		{Config{ThreadID: "t"}, nil, ErrNilCheckpoint},
		{Config{}, nil, ErrMissingThreadID},
		{Config{ThreadID: "t"}, &Checkpoint{}, ErrInvalidCheckpoint},
	} {
		if err := ValidatePut(tc.cfg, tc.cp, nil); !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("ValidatePut(%+v, %v) = %v, want %v", tc.cfg, tc.cp, err, tc.want)
		}
	}
}

func TestValidatePutWrites(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want error
	}{
		{Config{ThreadID: "t", CheckpointID: "c"}, nil},
		{Config{CheckpointID: "c"}, ErrMissingThreadID},
		{Config{ThreadID: "t"}, ErrMissingCheckpointID},
	} {
		cfg, want := tc.cfg, tc.want
		if err := ValidatePutWrites(cfg, nil, "task", ""); !errors.Is(err, want) || (want == nil) != (err == nil) {
			t.Errorf("ValidatePutWrites(%+v) = %v, want %v", cfg, err, want)
		}
	}
}

func TestApplyPendingSends(t *testing.T) {
	cp := &Checkpoint{ChannelVersions: map[string]string{"a": "2", "b": "10"}}
	ApplyPendingSends(cp, []any{"s1", "s2"}, VersionInt)
	if !reflect.DeepEqual(cp.ChannelValues[ChannelTasks], []any{"s1", "s2"}) {
		t.Fatalf("value = %v", cp.ChannelValues[ChannelTasks])
	}
	if cp.ChannelVersions[ChannelTasks] != "10" {
		t.Fatalf("version = %q, want the greatest existing (10)", cp.ChannelVersions[ChannelTasks])
	}
	empty := &Checkpoint{}
	ApplyPendingSends(empty, []any{"s"}, VersionInt)
	if empty.ChannelVersions[ChannelTasks] != "1" {
		t.Fatalf("version of a checkpoint without versions = %q, want 1", empty.ChannelVersions[ChannelTasks])
	}
	py := &Checkpoint{}
	ApplyPendingSends(py, []any{"s"}, VersionString)
	if n, err := VersionNumber(py.ChannelVersions[ChannelTasks]); err != nil || n != 1 {
		t.Fatalf("string style first version = %q", py.ChannelVersions[ChannelTasks])
	}
}

func TestWriteIndexAndUpsert(t *testing.T) {
	for ch, want := range map[string]int{ChannelError: -1, ChannelScheduled: -2, ChannelInterrupt: -3, ChannelResume: -4, "x": 7, ChannelTasks: 7} {
		if got := WriteIndex(ch, 7); got != want {
			t.Errorf("WriteIndex(%q, 7) = %d, want %d", ch, got, want)
		}
		if IsSpecialChannel(ch) != (want < 0) {
			t.Errorf("IsSpecialChannel(%q) = %v", ch, !(want < 0))
		}
	}
	if !UpsertWrites([]Write{{Channel: ChannelError}, {Channel: ChannelInterrupt}}) {
		t.Error("all-special writes do not upsert")
	}
	if UpsertWrites([]Write{{Channel: ChannelError}, {Channel: "x"}}) {
		t.Error("mixed writes upsert")
	}
	if UpsertWrites([]Write{{Channel: ChannelTasks}}) {
		t.Error("__pregel_tasks writes upsert")
	}
}
