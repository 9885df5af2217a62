package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// jsonLines decodes stdout as JSON lines: every line one compact JSON
// object, nothing else.
func jsonLines[T any](t *testing.T, stdout string) []T {
	t.Helper()
	var out []T
	for i, line := range strings.SplitAfter(stdout, "\n") {
		if line == "" {
			continue
		}
		if !strings.HasSuffix(line, "\n") || !strings.HasPrefix(line, "{") {
			t.Fatalf("line %d is not a JSON object on a line of its own: %q", i+1, line)
		}
		var v T
		dec := json.NewDecoder(strings.NewReader(line))
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("line %d: %v: %q", i+1, err, line)
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			t.Fatalf("line %d holds more than one JSON value: %q", i+1, line)
		}
		out = append(out, v)
	}
	return out
}

// jsonObject decodes stdout as exactly one JSON object.
func jsonObject(t *testing.T, stdout string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(stdout)))
	var v map[string]any
	if err := dec.Decode(&v); err != nil || v == nil {
		t.Fatalf("not one JSON object (%v): %q", err, stdout)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		t.Fatalf("more than one JSON value: %q", stdout)
	}
	return v
}

// leafCommands lists the commands that run (have RunE), by path without
// the root: "threads list", "keys reencrypt", ...
func leafCommands(c *cobra.Command, prefix string) []string {
	var out []string
	for _, sub := range c.Commands() {
		if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" {
			continue
		}
		path := strings.TrimSpace(prefix + " " + sub.Name())
		// A group (threads, store…) runs only to print its help or refuse
		// an unknown subcommand: its leaves are the commands.
		if sub.RunE != nil && !sub.HasSubCommands() {
			out = append(out, path)
		}
		out = append(out, leafCommands(sub, path)...)
	}
	return out
}

// TestJSONConvention runs every command with --json, in an order that
// gives each something to work on, against one real SQLite database (with
// the audit trail and per-subject keys on, for audit and forget), and
// checks that stdout parses under the convention doc.go declares for it:
// JSON lines (every line one object) for the commands that stream a list,
// exactly one JSON object for the others. A command added without a row
// here fails the test.
func TestJSONConvention(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	env := []string{"MEMVAULT_DB=" + db, "LANGGRAPH_AES_KEY=" + testKey, "MEMVAULT_AUDIT=true", "MEMVAULT_SUBJECT_NAMESPACE=users"}
	anchors := filepath.Join(t.TempDir(), "anchors.jsonl")
	const (
		object = "object"
		lines  = "lines"
	)
	blob := base64.StdEncoding.EncodeToString([]byte(`{"a":1}`))
	for _, tc := range []struct {
		cmd   string // the command's path, then its arguments
		args  []string
		shape string
		code  int
	}{
		{"migrate", nil, object, 0},
		{"threads import", []string{"testdata/thread.jsonl"}, object, 0},
		{"store put", []string{"users", "alice", "k1", `{"text":"prefers email"}`}, object, 0},
		{"store put", []string{"users", "alice", "k2", `{"text":"premium plan"}`}, object, 0},
		{"store put", []string{"users", "bob", "k1", `{"text":"basic plan"}`}, object, 0},
		{"threads list", nil, lines, 0},
		{"threads history", []string{"golden-thread"}, lines, 0},
		{"threads show", []string{"golden-thread"}, object, 0},
		{"threads fork", []string{"golden-thread", "--checkpoint", "1f0c6a2e-1111-6000-bfff-000000000001"}, object, 0},
		{"threads export", []string{"golden-thread"}, lines, 0},
		{"threads delete-checkpoint", []string{"golden-thread", "--checkpoint", "1f0c6a2e-2222-6000-8000-000000000002"}, object, 0},
		{"threads sweep", []string{"--keep-latest", "5", "--dry-run"}, object, 0},
		{"store get", []string{"users", "alice", "k1"}, object, 0},
		{"store search", []string{"users", "--query", "how to reach her"}, lines, 0},
		{"store namespaces", nil, lines, 0},
		{"store list", []string{"users", "alice"}, lines, 0},
		{"store delete", []string{"users", "alice", "k2"}, object, 0},
		{"store delete-prefix", []string{"users", "bob"}, object, 0},
		{"store reembed", nil, object, 0},
		{"keys generate", nil, object, 0},
		{"keys check", nil, object, 0},
		{"keys census", nil, lines, 0},
		{"keys rotate-kek", nil, object, 0},
		{"keys rotate-subject", []string{"alice"}, object, 0},
		{"keys reencrypt", nil, object, 0},
		{"audit verify", nil, object, 0},
		{"audit show", nil, lines, 0},
		{"audit anchor", []string{"--out", anchors}, object, 0},
		{"forget", []string{"alice"}, object, 0},
		{"keys readmit", []string{"alice"}, object, 0},
		{"threads delete", []string{"golden-thread"}, object, 0},
		{"threads delete", []string{"golden-thread", "nosuch"}, object, 1},
		{"serde decode", []string{"--type", "json", "--base64", blob}, object, 0},
		{"inspect", nil, "", 2}, // pages for people, their URL on stdout: --json is refused
		{"bench store", []string{"--backend", "sqlite", "--items", "20", "--dims", "8", "--ops", "get", "--duration", "50ms", "--concurrency", "1"}, lines, 0},
		{"bench checkpointer", []string{"--backend", "sqlite", "--workload", "messages", "--ops", "get_messages_50", "--duration", "50ms", "--concurrency", "1"}, lines, 0},
		{"demo", nil, "", 2}, // a transcript for people: --json is refused
	} {
		args := append(append(strings.Fields(tc.cmd), tc.args...), "--json")
		e := env
		if tc.cmd == "serde decode" { // a plaintext blob: no key
			e = nil
		}
		t.Logf("memvault %s", strings.Join(args, " "))
		r := cli(t, e, "", args...).must(t, tc.code)
		switch tc.shape {
		case lines:
			if got := jsonLines[map[string]any](t, r.stdout); len(got) == 0 {
				t.Errorf("%s --json printed no line", tc.cmd)
			}
		case object:
			jsonObject(t, r.stdout)
		default:
			if r.stdout != "" {
				t.Errorf("%s --json refused, yet printed %q", tc.cmd, r.stdout)
			}
		}
	}
}

// TestJSONConventionCoversEveryCommand fails when a command has no row in
// TestJSONConvention.
func TestJSONConventionCoversEveryCommand(t *testing.T) {
	src, err := os.ReadFile("jsonout_test.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range leafCommands(newRootCmd(&globals{lookup: func(string) (string, bool) { return "", false }}), "") {
		if !strings.Contains(string(src), "{\""+c+"\",") {
			t.Errorf("command %q has no row in TestJSONConvention", c)
		}
	}
}
