package core

import (
	"encoding/json"
	"math/big"
	"testing"

	"github.com/memvault/memvault/checkpointer"
)

func TestMetadataContains(t *testing.T) {
	md := checkpointer.Metadata{
		"source": "loop", "step": int64(3), "score": 0.5, "ok": true, "none": nil,
		"parents": map[string]any{"": "p1", "sub": "p2"},
		"tags":    []any{"a", "b", map[string]any{"k": "v", "n": 1}, []any{"x", "y"}},
		"user":    checkpointer.Metadata{"name": "ann", "roles": []string{"admin", "dev"}},
		"big":     int64(9007199254740993),
		"ints":    []int{1, 2, 3},
		"empty":   map[string]any{},
		"tenth":   0.1,
		"huge":    hugeInt(),
	}
	for _, tc := range []struct {
		name   string
		filter map[string]any
		want   bool
	}{
		{"nil filter", nil, true},
		{"float32 as stored", map[string]any{"tenth": float32(0.1)}, true},
		{"big.Int equal", map[string]any{"huge": hugeInt()}, true},
		{"big.Int as number text", map[string]any{"huge": json.Number("123456789012345678901234567890")}, true},
		{"big.Int neighbour", map[string]any{"huge": json.Number("123456789012345678901234567891")}, false},
		{"empty filter", map[string]any{}, true},
		{"string", map[string]any{"source": "loop"}, true},
		{"string mismatch", map[string]any{"source": "input"}, false},
		{"missing key", map[string]any{"nope": "x"}, false},
		{"null matches null", map[string]any{"none": nil}, true},
		{"null does not match missing", map[string]any{"missing": nil}, false},
		{"null does not match value", map[string]any{"source": nil}, false},
		{"int", map[string]any{"step": 3}, true},
		{"int as float", map[string]any{"step": 3.0}, true},
		{"int as json.Number", map[string]any{"step": json.Number("3")}, true},
		{"int as decimal json.Number", map[string]any{"step": json.Number("3.00")}, true},
		{"uint", map[string]any{"step": uint16(3)}, true},
		{"float", map[string]any{"score": 0.5}, true},
		{"float32", map[string]any{"score": float32(0.5)}, true},
		{"number is not string", map[string]any{"step": "3"}, false},
		{"string is not number", map[string]any{"source": 1}, false},
		{"bool", map[string]any{"ok": true}, true},
		{"bool mismatch", map[string]any{"ok": false}, false},
		{"bool is not number", map[string]any{"ok": 1}, false},
		{"exact beyond 2^53", map[string]any{"big": int64(9007199254740993)}, true},
		{"neighbour beyond 2^53", map[string]any{"big": int64(9007199254740992)}, false},
		{"partial object", map[string]any{"parents": map[string]any{"": "p1"}}, true},
		{"object as checkpointer.Metadata", map[string]any{"parents": checkpointer.Metadata{"sub": "p2"}}, true},
		{"object mismatch", map[string]any{"parents": map[string]any{"": "p2"}}, false},
		{"empty object matches object", map[string]any{"parents": map[string]any{}}, true},
		{"empty object does not match scalar", map[string]any{"source": map[string]any{}}, false},
		{"object does not match array", map[string]any{"tags": map[string]any{}}, false},
		{"array subset", map[string]any{"tags": []any{"b", "a"}}, true},
		{"array with missing element", map[string]any{"tags": []any{"a", "z"}}, false},
		{"array element object partial", map[string]any{"tags": []any{map[string]any{"k": "v"}}}, true},
		{"nested array", map[string]any{"tags": []any{[]any{"y"}}}, true},
		{"empty array matches array", map[string]any{"tags": []any{}}, true},
		{"empty array does not match object", map[string]any{"parents": []any{}}, false},
		{"scalar does not match array", map[string]any{"tags": "a"}, false},
		{"typed string slice", map[string]any{"user": map[string]any{"roles": []any{"dev"}}}, true},
		{"filter as typed slice", map[string]any{"ints": []int64{3, 1}}, true},
		{"filter as []string", map[string]any{"tags": []string{"a"}}, true},
		{"filter as []float64", map[string]any{"ints": []float64{2}}, true},
		{"deep mismatch", map[string]any{"user": map[string]any{"roles": []any{"ops"}}}, false},
		{"empty object vs empty object", map[string]any{"empty": map[string]any{}}, true},
		{"multi key all match", map[string]any{"source": "loop", "ok": true}, true},
		{"multi key one mismatch", map[string]any{"source": "loop", "ok": false}, false},
	} {
		if got := MetadataContains(md, tc.filter); got != tc.want {
			t.Errorf("%s: MetadataContains(%v) = %v, want %v", tc.name, tc.filter, got, tc.want)
		}
	}
}

func TestMetadataContainsUnsupportedValues(t *testing.T) {
	// Values JSON cannot hold never match and never panic.
	md := checkpointer.Metadata{"ch": make(chan int), "f": func() {}}
	for _, f := range []map[string]any{{"ch": 1}, {"f": "x"}, {"ch": map[string]any{}}, {"ch": []any{}}} {
		if MetadataContains(md, f) {
			t.Errorf("MetadataContains(%v) = true", f)
		}
	}
	if MetadataContains(checkpointer.Metadata{"n": 1}, map[string]any{"n": json.Number("not a number")}) {
		t.Error("an invalid json.Number matched")
	}
}

func hugeInt() *big.Int {
	b, _ := new(big.Int).SetString("123456789012345678901234567890", 10)
	return b
}
