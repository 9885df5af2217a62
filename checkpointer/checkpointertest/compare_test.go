package checkpointertest

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
)

func TestEqual(t *testing.T) {
	ts := time.Date(2024, 5, 4, 6, 32, 42, 235444000, time.UTC)
	type named string
	for _, tc := range []struct {
		name      string
		want, got any
		equal     bool
	}{
		{"nil", nil, nil, true},
		{"nil vs zero", nil, int64(0), false},
		{"int widths", int(7), int64(7), true},
		{"uint8", uint8(7), json.Number("7"), true},
		{"int vs integral float", 2, 2.0, true},
		{"int vs float", 2, 2.5, false},
		{"float", 0.1, json.Number("0.1"), true},
		{"big uint", uint64(math.MaxUint64), float64(math.MaxUint64), true},
		{"string", "a", "a", true},
		{"named string", named("a"), "a", true},
		{"string vs bytes", "a", []byte("a"), false},
		{"bytes", []byte{1, 2}, []byte{1, 2}, true},
		{"bytes differ", []byte{1, 2}, []byte{1, 3}, false},
		{"nil bytes vs empty", []byte(nil), []byte{}, true},
		{"top-level bytes vs base64", []byte("hi"), "aGk=", false},
		{"nested bytes vs base64", map[string]any{"b": []byte("hi")}, map[string]any{"b": "aGk="}, true},
		{"time", ts, ts.In(time.FixedZone("X", 3600)), true},
		{"time vs RFC 3339", ts, "2024-05-04T06:32:42.235444Z", true},
		{"time vs other", ts, ts.Add(time.Microsecond), false},
		{"time vs junk", ts, "yesterday", false},
		{"map", map[string]any{"a": 1, "b": []any{"x"}}, map[string]any{"b": []any{"x"}, "a": int64(1)}, true},
		{"typed map", map[string]int{"a": 1}, map[string]any{"a": 1.0}, true},
		{"metadata", checkpointer.Metadata{"a": 1}, map[string]any{"a": 1}, true},
		{"map missing key", map[string]any{"a": 1, "b": 2}, map[string]any{"a": 1}, false},
		{"map extra key", map[string]any{"a": 1}, map[string]any{"a": 1, "b": 2}, false},
		{"map value differs", map[string]any{"a": 1}, map[string]any{"a": 2}, false},
		{"slice", []string{"a", "b"}, []any{"a", "b"}, true},
		{"slice order", []any{"a", "b"}, []any{"b", "a"}, false},
		{"slice length", []any{"a"}, []any{"a", "a"}, false},
		{"array", [2]int{1, 2}, []any{1, 2}, true},
		{"pointer", new(int), 0, true},
		{"nil pointer", (*int)(nil), nil, true},
		{"bool", true, true, true},
		{"bool vs int", true, 1, false},
		{"map vs slice", map[string]any{}, []any{}, false},
	} {
		if got := Equal(tc.want, tc.got); got != tc.equal {
			t.Errorf("%s: Equal(%#v, %#v) = %v, want %v", tc.name, tc.want, tc.got, got, tc.equal)
		}
	}
}

func TestTupleDiffReportsEveryField(t *testing.T) {
	cp := &checkpointer.Checkpoint{V: 4, ID: "id", TS: time.Unix(1, 0), ChannelValues: map[string]any{"a": 1}, ChannelVersions: map[string]string{"a": "1"}}
	good := &checkpointer.Tuple{
		Config:        cfgOf("t", "ns", "id"),
		Checkpoint:    cp,
		Metadata:      checkpointer.Metadata{"k": "v"},
		ParentConfig:  &checkpointer.Config{ThreadID: "t", CheckpointNS: "ns", CheckpointID: "p"},
		PendingWrites: []checkpointer.PendingWrite{{TaskID: "task", Channel: "c", Value: 1}},
	}
	w := want{thread: "t", ns: "ns", id: "id", parent: "p", cp: cloneCheckpoint(cp), md: map[string]any{"k": "v"}, writes: []pw{{"task", "c", 1}}}
	if d := tupleDiff(good, w); d != "" {
		t.Fatalf("identical tuple differs: %s", d)
	}
	if d := tupleDiff(nil, w); d == "" {
		t.Fatal("nil tuple accepted")
	}
	mutations := map[string]func(tp *checkpointer.Tuple){
		"thread": func(tp *checkpointer.Tuple) { tp.Config.ThreadID = "x" },
		"ns":     func(tp *checkpointer.Tuple) { tp.Config.CheckpointNS = "x" },
		"id":     func(tp *checkpointer.Tuple) { tp.Config.CheckpointID = "x" },
		"parent": func(tp *checkpointer.Tuple) { tp.ParentConfig = nil },
		"parentid": func(tp *checkpointer.Tuple) {
			tp.ParentConfig = &checkpointer.Config{ThreadID: "t", CheckpointNS: "ns", CheckpointID: "q"}
		},
		"v":        func(tp *checkpointer.Tuple) { tp.Checkpoint.V = 1 },
		"ts":       func(tp *checkpointer.Tuple) { tp.Checkpoint.TS = time.Unix(2, 0) },
		"value":    func(tp *checkpointer.Tuple) { tp.Checkpoint.ChannelValues["a"] = 2 },
		"extra":    func(tp *checkpointer.Tuple) { tp.Checkpoint.ChannelValues["b"] = 2 },
		"version":  func(tp *checkpointer.Tuple) { tp.Checkpoint.ChannelVersions["a"] = "2" },
		"seen":     func(tp *checkpointer.Tuple) { tp.Checkpoint.VersionsSeen = map[string]map[string]string{"n": {}} },
		"updated":  func(tp *checkpointer.Tuple) { tp.Checkpoint.UpdatedChannels = []string{"a"} },
		"metadata": func(tp *checkpointer.Tuple) { tp.Metadata["k"] = "w" },
		"writes":   func(tp *checkpointer.Tuple) { tp.PendingWrites = nil },
		"task":     func(tp *checkpointer.Tuple) { tp.PendingWrites[0].TaskID = "x" },
		"wvalue":   func(tp *checkpointer.Tuple) { tp.PendingWrites[0].Value = 2 },
	}
	for name, mutate := range mutations {
		tp := *good
		c := *cloneCheckpoint(cp)
		tp.Checkpoint = &c
		tp.Metadata = checkpointer.Metadata{"k": "v"}
		tp.PendingWrites = []checkpointer.PendingWrite{{TaskID: "task", Channel: "c", Value: 1}}
		mutate(&tp)
		if d := tupleDiff(&tp, w); d == "" {
			t.Errorf("mutation %s not detected", name)
		}
	}
}
