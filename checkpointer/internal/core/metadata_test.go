package core

import (
	"math"
	"reflect"
	"testing"

	"github.com/memvault/memvault/checkpointer"
)

func TestSerializableMetadata(t *testing.T) {
	cfg := checkpointer.Config{
		ThreadID: "t", CheckpointNS: "ns", CheckpointID: "id",
		Extra: map[string]any{
			"user_id": "u", "count": 2, "ratio": 0.5, "flag": true, "u8": uint8(3),
			"__secret": "x", "thread_id": "x", "checkpoint_ns": "x", "checkpoint_id": "x", "checkpoint_map": "x",
			"langgraph_step": 1, "langgraph_node": "x", "langgraph_triggers": "x", "langgraph_path": "x", "langgraph_checkpoint_ns": "x",
			"obj": map[string]any{"a": 1}, "list": []any{1}, "nil": nil, "source": "from extra",
			"writes": "dropped", "assistant_id": "a\x00b",
		},
		Metadata: map[string]any{"run_id": "r", "user_id": "from metadata", "__x": 1},
	}
	md := checkpointer.Metadata{"source": "loop", "step": 1, "writes": map[string]any{"node": 1}, "parents": map[string]any{"": "p"}}
	got := SerializableMetadata(cfg, md)
	want := checkpointer.Metadata{
		"source": "loop", "step": 1, "parents": map[string]any{"": "p"},
		"run_id": "r", "user_id": "from metadata", "count": 2, "ratio": 0.5, "flag": true, "u8": uint8(3), "assistant_id": "ab",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("SerializableMetadata =\n%#v\nwant\n%#v", got, want)
	}
	// md is not modified.
	if _, ok := md["writes"]; !ok {
		t.Fatal("SerializableMetadata modified its argument")
	}
}

func TestSerializableMetadataStripsNUL(t *testing.T) {
	md := checkpointer.Metadata{
		"s": "a\x00b", "k\x00": "v", "nested": map[string]any{"x\x00": []any{"c\x00d", 1}},
		"typed": checkpointer.Metadata{"t": "e\x00f"}, "strs": []string{"g\x00h"}, "n": math.Pi,
	}
	got := SerializableMetadata(checkpointer.Config{}, md)
	want := checkpointer.Metadata{
		"s": "ab", "k": "v", "nested": map[string]any{"x": []any{"cd", 1}},
		"typed": map[string]any{"t": "ef"}, "strs": []string{"gh"}, "n": math.Pi,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, want %#v", got, want)
	}
	if md["s"] != "a\x00b" {
		t.Fatal("argument modified")
	}
}

func TestSerializableMetadataNil(t *testing.T) {
	got := SerializableMetadata(checkpointer.Config{}, nil)
	if got == nil || len(got) != 0 {
		t.Fatalf("SerializableMetadata(nil) = %#v, want an empty map", got)
	}
}
