package filtering

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"testing"

	"github.com/memvault/memvault/store"
)

func TestMatchFilter(t *testing.T) {
	v := map[string]any{
		"i": 9, "f": 9.5, "s": "9", "b": true, "z": nil, "l": []any{1, "x"},
		"o": map[string]any{"k": 1}, "n": json.Number("10"), "u": uint8(3), "a.b": "dotted",
		"tenth": 0.1, "huge": hugeInt(),
	}
	type fm = map[string]any
	cases := []struct {
		filter fm
		want   bool
	}{
		{fm{}, true},
		{nil, true},
		{fm{"tenth": float32(0.1)}, true},
		{fm{"huge": hugeInt()}, true},
		{fm{"huge": fm{"$gt": json.Number("123456789012345678901234567889")}}, true},
		{fm{"huge": fm{"$gt": hugeInt()}}, false},
		{fm{"i": 9}, true},
		{fm{"i": 9.0}, true},
		{fm{"i": json.Number("9.00")}, true},
		{fm{"i": "9"}, false},
		{fm{"s": "9"}, true},
		{fm{"s": 9}, false},
		{fm{"b": true}, true},
		{fm{"b": 1}, false},
		{fm{"z": nil}, true},
		{fm{"missing": nil}, false},
		{fm{"l": []any{1, "x"}}, true},
		{fm{"l": []any{"x", 1}}, false},
		{fm{"o": fm{"$eq": fm{"k": 1.0}}}, true},
		{fm{"o": fm{"$ne": fm{"k": 1}}}, false},
		{fm{"n": fm{"$gt": 9}}, true},
		{fm{"n": fm{"$gt": 10}}, false},
		{fm{"n": fm{"$gte": 10}}, true},
		{fm{"i": fm{"$lt": 10}}, true}, // numbers: 9 < 10 (text comparison would say no)
		{fm{"i": fm{"$gt": 10}}, false},
		{fm{"f": fm{"$gt": 9, "$lt": 10}}, true},
		{fm{"u": fm{"$lte": 3}}, true},
		{fm{"s": fm{"$gt": "10"}}, true}, // strings: "9" > "10"
		{fm{"s": fm{"$gt": 1}}, false},
		{fm{"i": fm{"$gt": "1"}}, false},
		{fm{"b": fm{"$gt": 0}}, false},
		{fm{"z": fm{"$lt": 0}}, false},
		{fm{"z": fm{"$ne": 0}}, true},
		{fm{"missing": fm{"$ne": 0}}, false},
		{fm{"missing": fm{"$lt": 0}}, false},
		{fm{"a.b": "dotted"}, true},
		{fm{"i": 9, "s": "9"}, true},
		{fm{"i": 9, "s": "8"}, false},
	}
	for _, c := range cases {
		got, err := MatchFilter(v, c.filter)
		if err != nil {
			t.Errorf("MatchFilter(%v): %v", c.filter, err)
			continue
		}
		if got != c.want {
			t.Errorf("MatchFilter(%v) = %v, want %v", c.filter, got, c.want)
		}
	}
}

func TestFilterErrors(t *testing.T) {
	type fm = map[string]any
	for _, f := range []fm{
		{"a": fm{"$in": []any{1}}},
		{"a": fm{"$gt": true}},
		{"a": fm{"$gt": nil}},
		{"a": fm{"$gt": []any{}}},
		{"a": fm{"$gt": math.NaN()}},
		{"a": fm{"$eq": math.Inf(1)}},
		{"a": fm{"b": 1}},
		{"a": fm{}},
		{"a": fm{"$eq": 1, "b": 1}},
		{"a": make(chan int)},
		{"ok": 1, "a": fm{"$bad": 1}},
	} {
		if err := ValidateFilter(f); !errors.Is(err, store.ErrInvalidFilter) {
			t.Errorf("ValidateFilter(%v) = %v", f, err)
		}
		// Even a value that fails another condition reports the error.
		if _, err := MatchFilter(map[string]any{}, f); !errors.Is(err, store.ErrInvalidFilter) {
			t.Errorf("MatchFilter(%v) = %v", f, err)
		}
	}
}

func TestJSONEqualBigNumbers(t *testing.T) {
	if JSONEqual(int64(9007199254740993), float64(9007199254740992)) {
		t.Error("2^53+1 equals 2^53 as a float")
	}
	if !JSONEqual(int64(9007199254740993), json.Number("9007199254740993")) {
		t.Error("int64 and json.Number of the same integer differ")
	}
	if !JSONEqual(uint64(math.MaxUint64), json.Number("18446744073709551615")) {
		t.Error("max uint64 differs from its literal")
	}
	if c := compareNumbers(json.Number("1e400"), float64(math.MaxFloat64)); c != 1 {
		t.Errorf("1e400 vs MaxFloat64 = %d", c)
	}
}

func FuzzFilter(f *testing.F) {
	f.Add([]byte(`{"a": 1, "b": "x", "c": [1, 2], "d": {"e": null}}`), []byte(`{"a": {"$gt": 0}}`))
	f.Add([]byte(`{"a": 1.5}`), []byte(`{"a": {"$lte": 1.5, "$ne": "x"}}`))
	f.Add([]byte(`{"a": "10"}`), []byte(`{"a": {"$lt": "9"}}`))
	f.Add([]byte(`{"a": true}`), []byte(`{"a": {"$gt": true}}`))
	f.Add([]byte(`{"a": 1e400}`), []byte(`{"a": 1e400}`))
	f.Add([]byte(`{}`), []byte(`{"a": {"$foo": 1}}`))
	f.Add([]byte(`{"a": {"b": 1}}`), []byte(`{"a": {"b": 1}}`))
	f.Fuzz(func(t *testing.T, valueJSON, filterJSON []byte) {
		for _, useNumber := range []bool{false, true} {
			var value, filter map[string]any
			if decode(valueJSON, &value, useNumber) != nil || decode(filterJSON, &filter, useNumber) != nil {
				return
			}
			verr := ValidateFilter(filter)
			got, err := MatchFilter(value, filter)
			if (verr == nil) != (err == nil) {
				t.Fatalf("ValidateFilter = %v but MatchFilter = %v", verr, err)
			}
			if err != nil {
				if !errors.Is(err, store.ErrInvalidFilter) {
					t.Fatalf("error %v is not store.ErrInvalidFilter", err)
				}
				continue
			}
			// A value always matches the literal filter built from itself
			// (when it has only JSON-comparable, non-operator fields).
			self := map[string]any{}
			for k, v := range value {
				if m, ok := v.(map[string]any); ok && len(m) > 0 {
					continue
				}
				if _, ok := v.(map[string]any); ok {
					continue
				}
				self[k] = v
			}
			if ok, err := MatchFilter(value, self); err == nil && !ok {
				t.Fatalf("value %s does not match its own fields %v", valueJSON, self)
			}
			_ = got
		}
	})
}

func decode(data []byte, v any, useNumber bool) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if useNumber {
		dec.UseNumber()
	}
	return dec.Decode(v)
}

func hugeInt() *big.Int {
	b, _ := new(big.Int).SetString("123456789012345678901234567890", 10)
	return b
}
