package core

import (
	"reflect"
	"testing"

	"github.com/memvault/memvault/checkpointer"
)

func TestApplyPendingSends(t *testing.T) {
	cp := &checkpointer.Checkpoint{ChannelVersions: map[string]string{"a": "2", "b": "10"}}
	ApplyPendingSends(cp, []any{"s1", "s2"}, checkpointer.VersionInt)
	if !reflect.DeepEqual(cp.ChannelValues[checkpointer.ChannelTasks], []any{"s1", "s2"}) {
		t.Fatalf("value = %v", cp.ChannelValues[checkpointer.ChannelTasks])
	}
	if cp.ChannelVersions[checkpointer.ChannelTasks] != "10" {
		t.Fatalf("version = %q, want the greatest existing (10)", cp.ChannelVersions[checkpointer.ChannelTasks])
	}
	empty := &checkpointer.Checkpoint{}
	ApplyPendingSends(empty, []any{"s"}, checkpointer.VersionInt)
	if empty.ChannelVersions[checkpointer.ChannelTasks] != "1" {
		t.Fatalf("version of a checkpoint without versions = %q, want 1", empty.ChannelVersions[checkpointer.ChannelTasks])
	}
	py := &checkpointer.Checkpoint{}
	ApplyPendingSends(py, []any{"s"}, checkpointer.VersionString)
	if n, err := VersionNumber(py.ChannelVersions[checkpointer.ChannelTasks]); err != nil || n != 1 {
		t.Fatalf("string style first version = %q", py.ChannelVersions[checkpointer.ChannelTasks])
	}
}

func TestWriteIndexAndUpsert(t *testing.T) {
	for ch, want := range map[string]int{checkpointer.ChannelError: -1, checkpointer.ChannelScheduled: -2, checkpointer.ChannelInterrupt: -3, checkpointer.ChannelResume: -4, "x": 7, checkpointer.ChannelTasks: 7} {
		if got := WriteIndex(ch, 7); got != want {
			t.Errorf("WriteIndex(%q, 7) = %d, want %d", ch, got, want)
		}
		if IsSpecialChannel(ch) != (want < 0) {
			t.Errorf("IsSpecialChannel(%q) = %v", ch, !(want < 0))
		}
	}
	if !UpsertWrites([]checkpointer.Write{{Channel: checkpointer.ChannelError}, {Channel: checkpointer.ChannelInterrupt}}) {
		t.Error("all-special writes do not upsert")
	}
	if UpsertWrites([]checkpointer.Write{{Channel: checkpointer.ChannelError}, {Channel: "x"}}) {
		t.Error("mixed writes upsert")
	}
	if UpsertWrites([]checkpointer.Write{{Channel: checkpointer.ChannelTasks}}) {
		t.Error("__pregel_tasks writes upsert")
	}
}
