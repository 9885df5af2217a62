package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/memvault/memvault/cmd/memvault/bench"
)

// TestBenchFlags checks the wiring of the bench commands' flags to the
// bench package: a tiny run of each on SQLite whose header and rows show
// the flags' values arrived, and, for the checkpointer, the JSON rows.
func TestBenchFlags(t *testing.T) {
	out := cli(t, nil, "", "bench", "store", "--backend", "sqlite", "--dims", "24", "--items", "40",
		"--duration", "200ms", "--concurrency", "2", "--ops", "get").must(t, 0).stdout
	for _, want := range []string{"40 items of 24 dims (offline hashing embedder), 200ms per row, concurrency 1 and 2", "seeded 2 stores",
		"throughput relative to raw-sql", "encrypted relative to plaintext"} {
		if !strings.Contains(out, want) {
			t.Errorf("bench store output lacks %q:\n%s", want, out)
		}
	}
	// The clustered mode: search figures for both data sets, exact.
	out = cli(t, nil, "", "bench", "store", "--backend", "sqlite", "--dims", "24", "--items", "300", "--topics", "2").must(t, 0).stdout
	for _, want := range []string{"search k=10 over 300 items of 24 dims, spread over 3 topics and clustered in 2",
		"spread       3 topics: first search after open", "clustered    2 topics: first search after open"} {
		if !strings.Contains(out, want) {
			t.Errorf("bench store --topics output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "recall@10 1.000"); n != 2 {
		t.Errorf("bench store --topics: %d data sets at recall@10 1.000, want 2:\n%s", n, out)
	}
	out = cli(t, nil, "", "bench", "checkpointer", "--backend", "sqlite", "--workload", "messages", "--ops", "get_messages_50",
		"--duration", "200ms", "--concurrency", "2", "--json").must(t, 0).stdout
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// Rows: raw-sql, plaintext, encrypted, audited and grouped at
	// concurrency 1 and 2.
	if len(lines) != 1+5*2 || !strings.HasPrefix(lines[0], `{"cluster":`) {
		t.Fatalf("bench checkpointer printed %d lines, want the settings and 10 rows:\n%s", len(lines), out)
	}
	for _, l := range lines[1:] {
		var r bench.Row
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.Op != "get_messages_50" || (r.Concurrency != 1 && r.Concurrency != 2) {
			t.Errorf("row %q (%v): want get_messages_50 at concurrency 1 or 2", l, err)
		}
	}
}

// TestBenchFlagsRefused refuses, with a usage error, what the benches
// cannot run, including a numeric flag given as 0 (which the bench package
// would read as its default).
func TestBenchFlagsRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"checkpointer", "--backend", "mysql", "--workload", "messages"}, `--backend: "mysql" (want postgres or sqlite)`},
		{[]string{"checkpointer", "--workload", "bigger"}, `--workload: "bigger" (want messages)`},
		{[]string{"checkpointer", "--backend", "sqlite", "--js", "interop/js"}, "--js measures JS LangGraph's PostgresSaver"},
		{[]string{"checkpointer", "--backend", "sqlite", "--scale", "100", "--threads", "1000"}, "--scale 100 over --threads 1000"},
		{[]string{"checkpointer", "--backend", "sqlite", "--scale", "1000000", "--threads", "10"}, "--scale 1000000 over --threads 10"},
		{[]string{"checkpointer", "--backend", "sqlite", "--workload", "messages", "--ops", "list"}, `unknown operation "list"`},
		{[]string{"checkpointer", "--backend", "sqlite", "--workload", "messages", "--js", "interop/js"}, "--js measures JS LangGraph's PostgresSaver"},
		{[]string{"checkpointer", "--backend", "sqlite", "--scale", "100", "--threads", "0"}, "--threads 0: want at least 1"},
		{[]string{"checkpointer", "--backend", "sqlite", "--workload", "messages", "--duration", "0"}, "--duration 0s: want more than 0"},
		{[]string{"checkpointer", "--backend", "sqlite", "--workload", "messages", "--concurrency", "0"}, "--concurrency 0: want at least 1"},
		{[]string{"store", "--backend", "sqlite", "--dims", "0"}, "--dims 0: want 1..4000"},
		{[]string{"store", "--backend", "sqlite", "--dims", "100000"}, "--dims 100000: want 1..4000"},
		{[]string{"store", "--backend", "sqlite", "--items", "0"}, "--items 0: want at least 1"},
		{[]string{"store", "--backend", "sqlite", "--concurrency", "0"}, "--concurrency 0: want at least 1"},
		{[]string{"store", "--backend", "sqlite", "--ops", "nope"}, `unknown operation "nope" (known: put, get, search_k10)`},
		{[]string{"store", "--backend", "sqlite", "--js", "interop/js"}, "--js measures JS LangGraph's PostgresStore"},
		{[]string{"store", "--backend", "sqlite", "--topics", "-1"}, "--topics -1: want 0 (off), or at least 1 with --backend sqlite"},
		{[]string{"store", "--topics", "80", "--dsn", "postgres://nobody@127.0.0.1:1/x"}, "--topics 80: want 0 (off), or at least 1 with --backend sqlite"},
		{[]string{"store", "--backend", "oracle", "--dsn", "postgres://nobody@127.0.0.1:1/x"}, `--backend "oracle": want postgres or sqlite`},
	} {
		r := cli(t, nil, "", append([]string{"bench"}, tc.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.msg) || r.stdout != "" {
			t.Errorf("bench %v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, r.code, r.stdout, r.stderr, tc.msg)
		}
	}
}
