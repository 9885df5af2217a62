package core

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
)

func sampleCheckpoint() *checkpointer.Checkpoint {
	return &checkpointer.Checkpoint{
		V:               4,
		ID:              "1ef4f797-8335-6428-8001-8a1503f9b875",
		TS:              time.Date(2024, 5, 4, 6, 32, 42, 235444000, time.UTC),
		ChannelValues:   map[string]any{"messages": []any{"hi"}},
		ChannelVersions: map[string]string{"messages": "00000000000000000000000000000002.0.5", "n": "3"},
		VersionsSeen:    map[string]map[string]string{"node": {"messages": "00000000000000000000000000000001.0.1"}, "__input__": {}},
		UpdatedChannels: []string{"messages"},
	}
}

func TestEncodeCheckpointJSON(t *testing.T) {
	b, err := EncodeCheckpointJSON(sampleCheckpoint(), checkpointer.VersionString)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["ts"] != "2024-05-04T06:32:42.235444+00:00" {
		t.Fatalf("ts = %v, want Python's isoformat", doc["ts"])
	}
	if cv, ok := doc["channel_values"].(map[string]any); !ok || len(cv) != 0 {
		t.Fatalf("channel_values = %v, want {} (values live in blobs)", doc["channel_values"])
	}
	if doc["v"] != 4.0 || doc["id"] != "1ef4f797-8335-6428-8001-8a1503f9b875" {
		t.Fatalf("v/id = %v/%v", doc["v"], doc["id"])
	}
	if _, ok := doc["pending_sends"]; ok {
		t.Fatal("v4 document has pending_sends")
	}
	// An integer version (JS's form, read into the string "3") stays an
	// integer in every style, so that JS can continue a thread memvault
	// rewrote (exported and imported, copied, forked).
	if v := doc["channel_versions"].(map[string]any)["n"]; v != 3.0 {
		t.Fatalf("string style wrote version %#v, want the integer 3", v)
	}
	for _, v := range []string{"03", "-3", "+3", " 3", "3.0", "00000000000000000000000000000003.0.5", "99999999999999999999"} {
		if got := string(encodeVersion(v, checkpointer.VersionString)); got[0] != '"' {
			t.Errorf("version %q written as %s, want a string (it would not read back the same)", v, got)
		}
	}
	if _, err := EncodeCheckpointJSON(nil, checkpointer.VersionString); !errors.Is(err, checkpointer.ErrNilCheckpoint) {
		t.Fatalf("EncodeCheckpointJSON(nil) = %v", err)
	}
}

func TestEncodeCheckpointJSONIntVersions(t *testing.T) {
	cp := sampleCheckpoint()
	cp.ChannelVersions = map[string]string{"a": "1", "b": "12"}
	cp.VersionsSeen = map[string]map[string]string{"node": {"a": "1"}}
	b, err := EncodeCheckpointJSON(cp, checkpointer.VersionInt)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"channel_versions":{"a":1,"b":12}`) || !strings.Contains(string(b), `"versions_seen":{"node":{"a":1}}`) {
		t.Fatalf("int style document %s lacks numeric versions", b)
	}
}

func TestCheckpointJSONRoundTrip(t *testing.T) {
	for _, style := range []checkpointer.VersionStyle{checkpointer.VersionString, checkpointer.VersionInt} {
		cp := sampleCheckpoint()
		if style == checkpointer.VersionInt {
			cp.ChannelVersions = map[string]string{"messages": "2", "n": "3"}
			cp.VersionsSeen = map[string]map[string]string{"node": {"messages": "1"}, "__input__": {}}
		}
		b, err := EncodeCheckpointJSON(cp, style)
		if err != nil {
			t.Fatal(err)
		}
		d, err := DecodeCheckpointJSON(b)
		if err != nil {
			t.Fatal(err)
		}
		got := d.Checkpoint
		want := *cp
		want.ChannelValues = nil
		if !got.TS.Equal(want.TS) {
			t.Fatalf("ts %v, want %v", got.TS, want.TS)
		}
		got.TS = want.TS
		if !reflect.DeepEqual(*got, want) {
			t.Fatalf("style %d round trip:\n%#v\nwant\n%#v", style, *got, want)
		}
		if d.Inline != nil || d.HasPendingSends {
			t.Fatalf("inline %v pending sends %v", d.Inline, d.HasPendingSends)
		}
	}
}

func TestDecodeCheckpointJSONFromJS(t *testing.T) {
	// JS LangGraph: integer versions, ts with Z, no channel_values key.
	doc := `{"v":4,"id":"1ef4f797-8335-6428-8001-8a1503f9b875","ts":"2024-05-04T06:32:42.235Z",
		"channel_versions":{"__start__":1,"messages":3,"f":2.0},"versions_seen":{"__input__":{},"agent":{"messages":2}},
		"updated_channels":null}`
	d, err := DecodeCheckpointJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	cp := d.Checkpoint
	if !reflect.DeepEqual(cp.ChannelVersions, map[string]string{"__start__": "1", "messages": "3", "f": "2"}) {
		t.Fatalf("versions %v", cp.ChannelVersions)
	}
	if cp.VersionsSeen["agent"]["messages"] != "2" {
		t.Fatalf("versions_seen %v", cp.VersionsSeen)
	}
	if want := time.Date(2024, 5, 4, 6, 32, 42, 235000000, time.UTC); !cp.TS.Equal(want) {
		t.Fatalf("ts %v, want %v", cp.TS, want)
	}
	if cp.UpdatedChannels != nil || d.Inline != nil {
		t.Fatalf("updated %v inline %v", cp.UpdatedChannels, d.Inline)
	}
}

func TestDecodeCheckpointJSONFromPython(t *testing.T) {
	// Python LangGraph: inline primitives, a fractional float version, and
	// a v1 document with pending_sends.
	doc := `{"v":1,"id":"1ef4f797-8335-6428-8001-8a1503f9b875","ts":"2024-05-04T06:32:42.235444+00:00",
		"channel_values":{"s":"text","n":1,"big":12345678901234567890,"f":1.5,"b":true,"z":null},
		"channel_versions":{"s":"00000000000000000000000000000001.0.5","x":2.5},
		"versions_seen":{},"pending_sends":[["node",{"arg":1}]]}`
	d, err := DecodeCheckpointJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"s": "text", "n": int64(1), "big": uint64(12345678901234567890), "f": 1.5, "b": true, "z": nil}
	if !reflect.DeepEqual(d.Inline, want) {
		t.Fatalf("inline = %#v, want %#v", d.Inline, want)
	}
	if !d.HasPendingSends || d.Checkpoint.V != 1 {
		t.Fatalf("pending sends %v v %d", d.HasPendingSends, d.Checkpoint.V)
	}
	if d.Checkpoint.ChannelVersions["x"] != "2.5" {
		t.Fatalf("float version = %q, want 2.5", d.Checkpoint.ChannelVersions["x"])
	}
	d, err = DecodeCheckpointJSON([]byte(`{"v":1,"id":"x","pending_sends":null}`))
	if err != nil || d.HasPendingSends {
		t.Fatalf("null pending_sends: %v %v", d, err)
	}
}

func TestDecodeCheckpointJSONErrors(t *testing.T) {
	for _, doc := range []string{
		``, `{`, `[]`, `"x"`, `{"v":"4"}`, `{"ts":"yesterday"}`, `{"channel_versions":{"a":{}}}`,
		`{"channel_versions":{"a":true}}`, `{"versions_seen":{"n":{"a":[1]}}}`, `{"versions_seen":{"n":1}}`, `{"v":4} {"v":4}`, `{"v":4} x`,
	} {
		_, err := DecodeCheckpointJSON([]byte(doc))
		if err == nil {
			t.Errorf("DecodeCheckpointJSON(%q) succeeded", doc)
			continue
		}
		if !errors.Is(err, checkpointer.ErrInvalidCheckpoint) && !errors.Is(err, checkpointer.ErrInvalidVersion) {
			t.Errorf("DecodeCheckpointJSON(%q) = %v, want checkpointer.ErrInvalidCheckpoint or checkpointer.ErrInvalidVersion", doc, err)
		}
	}
}

func TestDecodeJSONValue(t *testing.T) {
	v, err := DecodeJSONValue([]byte(`{"i":1,"neg":-2,"f":0.5,"big":1e400,"huge":18446744073709551616,"a":[1,{"b":2}]}`))
	if err == nil {
		t.Fatalf("1e400 decoded to %v", v)
	}
	if v, err := DecodeJSONValue([]byte(`1 2`)); err == nil {
		t.Fatalf("trailing data decoded to %v", v)
	}
	v, err = DecodeJSONValue([]byte(`{"i":1,"neg":-2,"f":0.5,"huge":18446744073709551616,"a":[1,{"b":2}]}`))
	if err != nil {
		t.Fatal(err)
	}
	huge, _ := new(big.Int).SetString("18446744073709551616", 10)
	want := map[string]any{"i": int64(1), "neg": int64(-2), "f": 0.5, "huge": huge, "a": []any{int64(1), map[string]any{"b": int64(2)}}}
	if !reflect.DeepEqual(v, want) {
		t.Fatalf("got %#v, want %#v", v, want)
	}
}

func FuzzDecodeCheckpointJSON(f *testing.F) {
	b, _ := EncodeCheckpointJSON(sampleCheckpoint(), checkpointer.VersionString)
	f.Add(b)
	b, _ = EncodeCheckpointJSON(&checkpointer.Checkpoint{V: 4, ID: "x", ChannelVersions: map[string]string{"a": "1"}}, checkpointer.VersionInt)
	f.Add(b)
	f.Add([]byte(`{"v":1,"channel_values":{"n":1},"pending_sends":[1]}`))
	f.Add([]byte(`{"channel_versions":{"a":1e400}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		d, err := DecodeCheckpointJSON(doc)
		if err != nil {
			if !errors.Is(err, checkpointer.ErrInvalidCheckpoint) && !errors.Is(err, checkpointer.ErrInvalidVersion) {
				t.Fatalf("error %v is not a checkpointer sentinel", err)
			}
			return
		}
		// What decodes re-encodes and decodes to the same checkpoint.
		again, err := EncodeCheckpointJSON(d.Checkpoint, checkpointer.VersionString)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		d2, err := DecodeCheckpointJSON(again)
		if err != nil {
			t.Fatalf("decode of re-encoded %s: %v", again, err)
		}
		a, b := *d.Checkpoint, *d2.Checkpoint
		if !a.TS.Equal(b.TS) && !(a.TS.IsZero() || a.TS.Year() < 0 || a.TS.Year() > 9999) {
			t.Fatalf("ts %v became %v", a.TS, b.TS)
		}
		a.TS, b.TS = time.Time{}, time.Time{}
		if !reflect.DeepEqual(a.ChannelVersions, b.ChannelVersions) || a.V != b.V || a.ID != b.ID {
			t.Fatalf("round trip changed %#v into %#v", a, b)
		}
	})
}

// FuzzDecodeVersion checks the fast paths of decodeVersion against the
// general decoder.
func FuzzDecodeVersion(f *testing.F) {
	for _, s := range []string{`"00000000000000000000000000000002.0.5488135039273248"`, `7`, `0`, `007`, `-1`, `1.0`, `"a\"b"`, `"é"`, `123456789012345678901`, `"\u0041"`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, gotErr := decodeVersion(raw)
		var v any
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&v); err != nil || d.More() {
			return // the fast paths only accept valid JSON, checked below
		}
		if gotErr != nil {
			return
		}
		switch x := v.(type) {
		case string:
			if got != x {
				t.Fatalf("decodeVersion(%s) = %q, want %q", raw, got, x)
			}
		case json.Number:
			if n, err := x.Int64(); err == nil && got != strconv.FormatInt(n, 10) {
				t.Fatalf("decodeVersion(%s) = %q, want %d", raw, got, n)
			}
		}
	})
}

// FuzzScanStoredCheckpoint checks the fast document scanner against
// encoding/json: wherever the scanner takes a document, it produces what
// encoding/json produces.
func FuzzScanStoredCheckpoint(f *testing.F) {
	for _, seed := range scanSeeds() {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		checkScan(t, doc)
	})
}

func scanSeeds() []string {
	b1, _ := EncodeCheckpointJSON(sampleCheckpoint(), checkpointer.VersionString)
	b2, _ := EncodeCheckpointJSON(&checkpointer.Checkpoint{V: 4, ID: "x", ChannelVersions: map[string]string{"a": "1"}, UpdatedChannels: []string{}}, checkpointer.VersionInt)
	return []string{
		string(b1), string(b2),
		`{"v":1,"id":"a","ts":"2024-01-01T00:00:00+00:00","channel_values":{"n":1,"s":"x\"y","o":{"a":[1,{"b":"]"}]}},"channel_versions":{"n":"00000000000000000000000000000001.0.1","m":7},"versions_seen":{"__input__":{},"agent":{"n":2}},"updated_channels":null,"pending_sends":[{"a":"}"}],"extra":[1,2,{"x":null}]}`,
		` { "v" : 4 , "channel_versions" : { "a" : "1" } , "updated_channels" : [ "a" , "b" ] } `,
		`{"checkpointer.V":2}`, `{"v":1,"v":2}`, `{"v":4.0}`, `{"v":-1}`, `{"v":01}`, `{"channel_versions":{"a":1.5}}`,
		`{"channel_versions":{"a":"1","a":"2"}}`, `{"versions_seen":{"n":{"a":"1"},"n":{"b":"2"}}}`,
		`{"channel_versions":null}`, `{"id":"\u00e9"}`, `{"id":"é"}`, `{"pending_sends":null}`, `[]`, `{}`, `{"v":1}x`,
	}
}

// checkScan fails t when the scanner takes doc and disagrees with
// encoding/json.
func checkScan(t *testing.T, doc []byte) {
	t.Helper()
	var fast storedCheckpoint
	if !scanStoredCheckpoint(doc, &fast) {
		return
	}
	var slow storedCheckpoint
	if err := decodeStoredCheckpoint(doc, &slow); err != nil {
		t.Fatalf("%s: scanned, but encoding/json fails: %v", doc, err)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%s:\nscanner       %#v\nencoding/json %#v", doc, fast, slow)
	}
}

// TestScanStoredCheckpoint runs the fuzz seeds and checks that the
// documents writers produce take the fast path.
func TestScanStoredCheckpoint(t *testing.T) {
	for _, s := range scanSeeds() {
		checkScan(t, []byte(s))
	}
	for i, s := range scanSeeds()[:4] {
		var sc storedCheckpoint
		if !scanStoredCheckpoint([]byte(s), &sc) {
			t.Errorf("seed %d: a writer's document is not scanned: %s", i, s)
		}
	}
}

// TestScanDeepRawValue: a raw value nested near encoding/json's depth limit
// is left to encoding/json, which judges the whole document.
func TestScanDeepRawValue(t *testing.T) {
	for _, depth := range []int{maxRawDepth, maxRawDepth + 1, 9999, 10000} {
		doc := `{"v":4,"channel_values":{"x":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}}`
		var sc storedCheckpoint
		if scanStoredCheckpoint([]byte(doc), &sc) != (depth <= maxRawDepth) {
			t.Errorf("depth %d: scanner took it: %v", depth, depth > maxRawDepth)
		}
		checkScan(t, []byte(doc))
	}
}
