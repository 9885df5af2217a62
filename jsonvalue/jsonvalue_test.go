package jsonvalue_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/memvault/memvault/jsonvalue"
	"github.com/memvault/memvault/jsonvalue/jsonvaluetest"
)

func TestCanonical(t *testing.T) {
	for _, c := range jsonvaluetest.Cases() {
		got, err := jsonvalue.Canonical(c.In)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		if d := jsonvalue.Diff(c.Want, got); d != "" {
			t.Errorf("%s: %s", c.Name, d)
		}
	}
}

// TestRoundTrip is the property every backend relies on: the text Marshal
// writes reads back as the same model value. (That jsonb's reprinting keeps
// it too is held by the store conformance suite on PostgreSQL.)
func TestRoundTrip(t *testing.T) {
	for _, c := range jsonvaluetest.Cases() {
		b, err := jsonvalue.Marshal(c.In)
		if err != nil {
			t.Errorf("%s: Marshal: %v", c.Name, err)
			continue
		}
		if !json.Valid(b) {
			t.Errorf("%s: Marshal wrote invalid JSON %s", c.Name, b)
		}
		got, err := jsonvalue.Unmarshal(b)
		if err != nil {
			t.Errorf("%s: Unmarshal(%s): %v", c.Name, b, err)
			continue
		}
		if d := jsonvalue.Diff(c.Want, got); d != "" {
			t.Errorf("%s: %s (text %s)", c.Name, d, b)
		}
	}
}

func TestFloatsStayFloats(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{5, "5.0"}, {-0.5, "-0.5"}, {1e21, "1000000000000000000000.0"}, {1e-7, "1e-07"},
		{123456789.125, "123456789.125"}, {0.000001, "0.000001"},
	} {
		b, err := jsonvalue.Marshal(tc.f)
		if err != nil || string(b) != tc.want {
			t.Errorf("Marshal(%v) = %s, %v; want %s", tc.f, b, err, tc.want)
		}
	}
}

func TestRefused(t *testing.T) {
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	for name, v := range map[string]any{
		"nan":          math.NaN(),
		"inf":          math.Inf(-1),
		"float32_inf":  float32(math.Inf(1)),
		"bad_utf8":     "a\xffb",
		"bad_utf8_key": map[string]any{"\xff": 1},
		"bad_number":   json.Number("01"),
		"number_text":  json.Number("NaN"),
		"huge_float":   json.Number("1e400"),
		"channel":      make(chan int),
		"func":         func() {},
		"cycle":        cyclic,
		"nested_nan":   []any{map[string]any{"x": []float64{1, math.NaN()}}},
	} {
		if _, err := jsonvalue.Canonical(v); !errors.Is(err, jsonvalue.ErrUnsupported) {
			t.Errorf("Canonical(%s) = %v, want ErrUnsupported", name, err)
		}
		if _, err := jsonvalue.Marshal(v); !errors.Is(err, jsonvalue.ErrUnsupported) {
			t.Errorf("Marshal(%s) = %v, want ErrUnsupported", name, err)
		}
	}
}

func TestUnmarshalRejects(t *testing.T) {
	for _, s := range []string{``, `{`, `{} {}`, `1 2`, `[1e400]`, `{"a":1}x`} {
		if _, err := jsonvalue.Unmarshal([]byte(s)); err == nil {
			t.Errorf("Unmarshal(%q) succeeded", s)
		}
	}
	if _, err := jsonvalue.Unmarshal([]byte(strings.Repeat("[", 20000) + strings.Repeat("]", 20000))); err == nil {
		t.Errorf("Unmarshal of 20000 nested arrays succeeded")
	}
}

func TestNormalizeInPlace(t *testing.T) {
	in, want := jsonvaluetest.All()
	got, err := jsonvalue.Normalize(in)
	if err != nil {
		t.Fatal(err)
	}
	if d := jsonvalue.Diff(want, got); d != "" {
		t.Fatal(d)
	}
}

func TestDiffIsStrict(t *testing.T) {
	for _, c := range []struct{ a, b any }{
		{int64(5), 5.0}, {int64(5), int(5)}, {5.0, float32(5)}, {"aGk=", []byte("hi")},
		{map[string]any{"a": int64(1)}, map[string]any{"a": int64(1), "b": nil}},
		{[]any{int64(1)}, []any{int64(1), int64(2)}}, {nil, map[string]any(nil)},
		{0.0, math.Copysign(0, -1)},
	} {
		if jsonvalue.Diff(c.a, c.b) == "" || jsonvalue.Diff(c.b, c.a) == "" {
			t.Errorf("Diff(%#v, %#v) found no difference", c.a, c.b)
		}
	}
}

func FuzzUnmarshal(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5,"x",null,true]}`, `123456789012345678901234567890`, `-0.0`, `1e-400`, `"\u2028"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := jsonvalue.Unmarshal(data)
		if err != nil {
			return
		}
		b, err := jsonvalue.Marshal(v)
		if err != nil {
			t.Fatalf("Marshal of an unmarshalled value: %v", err)
		}
		again, err := jsonvalue.Unmarshal(b)
		if err != nil {
			t.Fatalf("Unmarshal(%s): %v", b, err)
		}
		if d := jsonvalue.Diff(v, again); d != "" {
			t.Fatalf("%s → %s: %s", data, b, d)
		}
	})
}

// TestErrorsDoNotQuoteValues: values are user data; an error says where
// the bad UTF-8 is, not what the value holds.
func TestErrorsDoNotQuoteValues(t *testing.T) {
	secret := "patient Carol\xff"
	for _, v := range []any{secret, map[string]any{secret: 1}, []any{secret}} {
		_, err := jsonvalue.Canonical(v)
		if err == nil || strings.Contains(err.Error(), "Carol") {
			t.Fatalf("Canonical error %v quotes the value", err)
		}
		_, err = jsonvalue.Marshal(v)
		if err == nil || strings.Contains(err.Error(), "Carol") {
			t.Fatalf("Marshal error %v quotes the value", err)
		}
	}
}
