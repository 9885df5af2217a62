package core

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/jsonvalue"
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

// TestEncodeMetadataAsIs: EncodeMetadata writes md without copying it
// when it is its own SerializableMetadata (storedAsIs), and the bytes are
// those of SerializableMetadata's copy, whichever way each case goes: no
// "writes", one, NUL characters at every depth, a nested
// checkpointer.Metadata, scalars merged from the config or not, nil.
func TestEncodeMetadataAsIs(t *testing.T) {
	deep := map[string]any{"a": []any{"x", map[string]any{"b": []string{"y"}}}}
	cases := []struct {
		name string
		cfg  checkpointer.Config
		md   checkpointer.Metadata
		asIs bool
	}{
		{"plain", checkpointer.Config{}, checkpointer.Metadata{"source": "loop", "step": 3, "run_id": "r", "parents": map[string]any{"": "p"}}, true},
		{"deep", checkpointer.Config{}, checkpointer.Metadata{"d": deep, "f": 1.5, "n": nil, "u": uint64(7)}, true},
		{"empty", checkpointer.Config{}, checkpointer.Metadata{}, true},
		{"nil", checkpointer.Config{}, nil, false},
		{"writes", checkpointer.Config{}, checkpointer.Metadata{"writes": map[string]any{"n": 1}, "step": 1}, false},
		{"NUL string", checkpointer.Config{}, checkpointer.Metadata{"s": "a\x00b"}, false},
		{"NUL key", checkpointer.Config{}, checkpointer.Metadata{"k\x00": "v"}, false},
		{"NUL deep", checkpointer.Config{}, checkpointer.Metadata{"d": map[string]any{"a": []any{map[string]any{"b": []string{"y\x00"}}}}}, false},
		{"NUL deep key", checkpointer.Config{}, checkpointer.Metadata{"d": []any{map[string]any{"\x00": 1}}}, false},
		{"typed", checkpointer.Config{}, checkpointer.Metadata{"t": checkpointer.Metadata{"a": "b"}}, false},
		{"merged", checkpointer.Config{Metadata: map[string]any{"user": "u"}}, checkpointer.Metadata{"step": 1}, false},
		{"merged extra", checkpointer.Config{Extra: map[string]any{"n": 2}}, checkpointer.Metadata{"step": 1}, false},
		{"merged NUL key", checkpointer.Config{Extra: map[string]any{"a\x00": "x"}}, checkpointer.Metadata{"step": 1}, false},
		{"nothing to merge", checkpointer.Config{
			Metadata: map[string]any{"step": 9, "__x": 1, "writes": "w", "thread_id": "t", "obj": map[string]any{"a": 1}},
			Extra:    map[string]any{"langgraph_node": "n", "list": []any{1}, "nil": nil},
		}, checkpointer.Metadata{"step": 1}, true},
	}
	for _, c := range cases {
		if got := storedAsIs(c.cfg, c.md); got != c.asIs {
			t.Errorf("%s: storedAsIs = %v, want %v", c.name, got, c.asIs)
		}
		got, err := EncodeMetadata(c.cfg, c.md)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want, err := jsonvalue.Marshal(map[string]any(SerializableMetadata(c.cfg, c.md)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: EncodeMetadata = %s, want %s", c.name, got, want)
		}
	}
	// The buffer is reused: a second encoding does not change the first.
	a, _ := EncodeMetadata(checkpointer.Config{}, checkpointer.Metadata{"a": "first"})
	_, _ = EncodeMetadata(checkpointer.Config{}, checkpointer.Metadata{"b": "second, longer"})
	if string(a) != `{"a":"first"}` {
		t.Fatalf("first encoding became %s", a)
	}
}

// TestEncodeMetadataCycle: a cyclic metadata value still fails (the
// depth bound of storedAsIs sends it to the copy, whose encoding
// refuses it) instead of exhausting the stack.
func TestEncodeMetadataCycle(t *testing.T) {
	m := map[string]any{}
	m["self"] = m
	if _, err := EncodeMetadata(checkpointer.Config{}, checkpointer.Metadata{"m": m}); !errors.Is(err, checkpointer.ErrInvalidMetadata) {
		t.Fatalf("err = %v, want ErrInvalidMetadata", err)
	}
}
