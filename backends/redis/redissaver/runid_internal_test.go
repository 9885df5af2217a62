package redissaver

import (
	"encoding/json"
	"testing"
)

// runIDReflect is runID as json.Unmarshal reads it: what the scanner must
// agree with.
func runIDReflect(meta []byte) string {
	var m struct {
		RunID any `json:"run_id"`
	}
	if json.Unmarshal(meta, &m) != nil {
		return ""
	}
	s, _ := m.RunID.(string)
	return s
}

// TestRunID: the scanning runID reads what json.Unmarshal reads, on
// metadata as the engine writes it and on odd JSON (spaces, nesting,
// escapes, case, duplicates, other types, invalid input).
func TestRunID(t *testing.T) {
	for _, meta := range []string{
		`{"run_id":"bench","source":"loop","step":7}`,
		`{"a":{"run_id":"inner"},"b":[1,"x",{"c":"]}"}],"run_id":"outer"}`,
		`{"parents":{},"run_id":"r-1","step":-1,"writes":null}`,
		` { "run_id" : "spaced" } `,
		"{\n\t\"run_id\":\r\"ws\"}",
		`{"RUN_ID":"upper"}`, `{"Run_Id":"mixed","run_id":"last"}`, `{"run_id":"first","RUN_ID":"last"}`,
		`{"run_id":"a","run_id":5}`, `{"run_id":5}`, `{"run_id":null}`, `{"run_id":true}`, `{"run_id":["x"]}`,
		`{"run_id":{"x":"y"}}`, `{"run_id":"esc\"aped\\"}`, `{"run_id":"\u0041"}`, `{"run\u005fid":"escaped key"}`,
		`{"x":"\"run_id\":\"fake\""}`, `{"x":"a\\","run_id":"after backslash"}`, `{"run_id":"é日本"}`,
		`{}`, `[]`, `"run_id"`, `null`, ``, `{`, `{"run_id":"x"`, `{"run_id":"x"} trailing`, `{"run_id":}`,
		`{"n":1e5,"m":-0.5,"run_id":"after numbers"}`, "{\"run_id\":\"bad \xff utf8\"}", "{\"k\xff\":1,\"run_id\":\"ok\"}",
	} {
		if got, want := runID([]byte(meta)), runIDReflect([]byte(meta)); got != want {
			t.Errorf("runID(%s) = %q, json.Unmarshal reads %q", meta, got, want)
		}
	}
}

// TestRunIDAllocs: reading the run id of a put's metadata allocates only
// the string (json.Unmarshal made 8).
func TestRunIDAllocs(t *testing.T) {
	meta := []byte(`{"run_id":"bench","source":"loop","step":7}`)
	if n := testing.AllocsPerRun(100, func() { _ = runID(meta) }); n > 1 {
		t.Fatalf("runID made %v allocations, want at most 1", n)
	}
}
