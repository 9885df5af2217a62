package indexing

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/memvault/memvault/store"
)

// TestTextsGolden checks the extracted texts against LangGraph's
// get_text_at_path (testdata/gen_paths.py produced the golden file).
func TestTextsGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/paths.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Value map[string]any `json:"value"`
		Cases []struct {
			Path  string   `json:"path"`
			Texts []string `json:"texts"`
		} `json:"cases"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&golden); err != nil {
		t.Fatal(err)
	}
	if len(golden.Cases) < 40 {
		t.Fatalf("golden file has only %d cases", len(golden.Cases))
	}
	for _, c := range golden.Cases {
		t.Run(c.Path, func(t *testing.T) {
			p, err := ParsePath(c.Path)
			if err != nil {
				t.Fatalf("ParsePath(%q): %v", c.Path, err)
			}
			got := p.Texts(golden.Value)
			if got == nil {
				got = []string{}
			}
			if !slices.Equal(got, c.Texts) {
				t.Fatalf("Texts(%q)\n got %q\nwant %q", c.Path, got, c.Texts)
			}
		})
	}
}

func TestTextsGoValues(t *testing.T) {
	v := map[string]any{
		"f": 1.0, "i": 7, "i64": int64(-3), "u8": uint8(9), "f32": float32(0.1), "b": true,
		"typed": []string{"x", "y"}, "tm": map[string]int{"b": 2, "a": 1},
		"st": struct {
			A int `json:"a"`
		}{5},
		"nested": map[string]any{"list": []any{1.5, map[string]any{"z": nil, "a": "é"}}},
	}
	cases := map[string][]string{
		"f":           {"1.0"},
		"i":           {"7"},
		"i64":         {"-3"},
		"u8":          {"9"},
		"f32":         {"0.1"},
		"b":           {"True"},
		"typed":       {`["x", "y"]`},
		"typed[1]":    {"y"},
		"typed[*]":    {"x", "y"},
		"tm":          {`{"a": 1, "b": 2}`},
		"tm.b":        {"2"},
		"st.a":        {"5"},
		"nested":      {`{"list": [1.5, {"a": "é", "z": null}]}`},
		"nested.list": {`[1.5, {"a": "é", "z": null}]`},
		"{b,f,i}":     {"True", "1.0", "7"},
	}
	for path, want := range cases {
		if got := MustParsePath(path).Texts(v); !slices.Equal(got, want) {
			t.Errorf("Texts(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestPyFloatRepr(t *testing.T) {
	// Expected strings are Python's repr() of the same floats.
	cases := map[float64]string{
		1.0: "1.0", 1e-05: "1e-05", 0.1: "0.1", 1e16: "1e+16", 1e15: "1000000000000000.0",
		123456789012345678.0: "1.2345678901234568e+17", 0.0001: "0.0001", 1.5: "1.5",
		100.0: "100.0", 5e-324: "5e-324", 1.7976931348623157e308: "1.7976931348623157e+308",
		9999999999999998.0: "9999999999999998.0", 0.00012345: "0.00012345", 1e22: "1e+22",
		-2.5e-7: "-2.5e-07", 0: "0.0",
	}
	for f, want := range cases {
		if got := pyFloatRepr(f, 64); got != want {
			t.Errorf("pyFloatRepr(%v) = %q, want %q", f, got, want)
		}
	}
	negZero := -1 / posInf()
	if got := pyFloatRepr(negZero, 64); got != "-0.0" {
		t.Errorf("pyFloatRepr(-0.0) = %q", got)
	}
}

func posInf() float64 { var z float64; return 1 / z }

func TestExtractTextsFieldNames(t *testing.T) {
	v := map[string]any{"title": "T", "tags": []any{"a", "b", "c"}, "one": []any{"x"}, "none": nil}
	got, err := ExtractTexts(v, []string{"title", "tags[*]", "one[*]", "none", "missing"})
	if err != nil {
		t.Fatal(err)
	}
	want := []FieldText{
		{"title", "T"}, {"tags[*].0", "a"}, {"tags[*].1", "b"}, {"tags[*].2", "c"}, {"one[*]", "x"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("ExtractTexts = %q, want %q", got, want)
	}
	got, err = ExtractTexts(map[string]any{"a": 1}, nil)
	if err != nil || !slices.Equal(got, []FieldText{{"$", `{"a": 1}`}}) {
		t.Fatalf("ExtractTexts(nil paths) = %q, %v", got, err)
	}
	if _, err := ExtractTexts(v, []string{"ok", "bad["}); !errors.Is(err, store.ErrInvalidPath) {
		t.Fatalf("ExtractTexts(bad path) error = %v", err)
	}
}

func TestParsePathErrors(t *testing.T) {
	for _, p := range []string{
		"a[", "a[0", "a]", "a}", "{a", "a..b", ".a", "a.", "a[x]", "a[1.5]", "a[]", "a[--1]",
		"{}", "{a,}", "{a,,b}", "{a}.b", "{a}[0]", "{a,{b}}", "{a[0]}", "a[0]b", ",", "a,b", "a[ 1]",
	} {
		if _, err := ParsePath(p); !errors.Is(err, store.ErrInvalidPath) {
			t.Errorf("ParsePath(%q) error = %v, want store.ErrInvalidPath", p, err)
		}
	}
	for _, p := range []string{"$", "", "a", "a.b", "[0]", "a.[0]", "a[-1]", "a[*].b", "*", "*.b", "a.*", "{a, b.c}", "a.{b}", "a{b}", "a b", "$.a", "a*b"} {
		if _, err := ParsePath(p); err != nil {
			t.Errorf("ParsePath(%q): %v", p, err)
		}
	}
}

func TestPythonJSONEscapes(t *testing.T) {
	got := PythonJSON(map[string]any{"s": "q\"b\\n\nt\tc\x01\x1f</>&\u2028é", "n": nil, "l": []any{}, "o": map[string]any{}})
	want := `{"l": [], "n": null, "o": {}, "s": "q\"b\\n\nt\tc\u0001\u001f</>&` + "\u2028" + `é"}`
	if got != want {
		t.Fatalf("PythonJSON\n got %s\nwant %s", got, want)
	}
}

func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"$", "a.b", "a[0]", "a[-1]", "a[*].b", "{a,b.c}", "*", "a[", "{", "a..b", "[[0]]", "a.{b,c}", "x[9999999999999999999]"} {
		f.Add(s)
	}
	value := map[string]any{"a": map[string]any{"b": []any{1, "x", map[string]any{"c": 2.5}}}, "b": []any{nil, true}}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePath(s)
		if err != nil {
			if !errors.Is(err, store.ErrInvalidPath) {
				t.Fatalf("ParsePath(%q) error %v is not store.ErrInvalidPath", s, err)
			}
			return
		}
		_ = p.Texts(value)
		if p.String() != s && !(s == "" && p.String() == "$") {
			t.Fatalf("String() = %q, want %q", p.String(), s)
		}
	})
}
