package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/vault"
)

// TestThreadsDeleteReportsMissing: a thread that does not exist is not
// reported deleted; it is "not found" (exit 1) after the others are
// deleted.
func TestThreadsDeleteReportsMissing(t *testing.T) {
	env := sqliteEnv(t)
	cli(t, env, "", "threads", "import", "testdata/thread.jsonl").must(t, 0)
	r := cli(t, env, "", "--json", "threads", "delete", "nosuch", "golden-thread").must(t, 1)
	got := jsonObject(t, r.stdout)
	if compactJSON(got) != `{"deleted":["golden-thread"],"not_found":["nosuch"]}` {
		t.Fatalf("threads delete --json = %s", compactJSON(got))
	}
	if !strings.Contains(r.stderr, `not found: no thread "nosuch"`) {
		t.Fatalf("stderr %q", r.stderr)
	}
	r = cli(t, env, "", "threads", "delete", "golden-thread").must(t, 1)
	if strings.Contains(r.stdout, "deleted") {
		t.Fatalf("a deleted thread deleted again: %q", r.stdout)
	}
}

// TestStoreListNextPage: "next page" only when another page follows.
func TestStoreListNextPage(t *testing.T) {
	env := sqliteEnv(t)
	for _, k := range []string{"a", "b", "c"} {
		cli(t, env, "", "store", "put", "--no-index", "users", "u1", k, `{}`).must(t, 0)
	}
	for _, tc := range []struct {
		args []string
		next string
	}{
		{[]string{"--limit", "2"}, "next page: --after b\n"},
		{[]string{"--limit", "3"}, ""},
		{[]string{"--limit", "5"}, ""},
		{[]string{"--after", "b", "--limit", "1"}, ""},
		{nil, ""},
	} {
		out := cli(t, env, "", append([]string{"store", "list", "users", "u1"}, tc.args...)...).must(t, 0).stdout
		_, next, _ := strings.Cut(out, "next page")
		if next != "" {
			next = "next page" + next
		}
		if next != tc.next {
			t.Errorf("store list %v: next page line %q, want %q (output %q)", tc.args, next, tc.next, out)
		}
	}
}

// TestNamespacesPrintWithSlash: every human output prints a namespace as
// --prefix takes it, labels joined with '/'.
func TestNamespacesPrintWithSlash(t *testing.T) {
	env := sqliteEnv(t)
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"store", "put", "users", "alice", "k", `{"text":"x"}`}, 0, "stored users/alice/k\n"},
		{[]string{"store", "namespaces"}, 0, "users/alice\n"},
		{[]string{"store", "search", "users"}, 0, "users/alice/k "},
		{[]string{"store", "get", "users", "alice", "nope"}, 1, "no item users/alice/nope"},
		{[]string{"store", "delete", "users", "alice", "k"}, 0, "deleted users/alice/k\n"},
		{[]string{"store", "delete-prefix", "users", "alice"}, 0, "deleted 0 items under users/alice\n"},
	} {
		r := cli(t, env, "", tc.args...).must(t, tc.code)
		if !strings.Contains(r.stdout+r.stderr, tc.out) || strings.Contains(r.stdout+r.stderr, "users.alice") {
			t.Errorf("%v printed %q %q, want %q", tc.args, r.stdout, r.stderr, tc.out)
		}
	}
}

// TestEmptyKeyOrNamespaceIsUsage: an empty key or namespace label (an
// unset shell variable) is a usage error, exit 2, before the database is
// opened.
func TestEmptyKeyOrNamespaceIsUsage(t *testing.T) {
	env := sqliteEnv(t)
	cli(t, env, "", "migrate").must(t, 0)
	for _, args := range [][]string{
		{"store", "put", "", "k", "{}"},
		{"store", "put", "users", "", "{}"},
		{"store", "get", "users", ""},
		{"store", "get", "", "k"},
		{"store", "delete", "users", ""},
		{"store", "list", ""},
		{"store", "delete-prefix", "users", ""},
		{"store", "search", "users", ""},
	} {
		r := cli(t, env, "", args...).must(t, 2)
		if !strings.Contains(r.stderr, "invalid namespace") && !strings.Contains(r.stderr, "invalid key") {
			t.Errorf("%q: stderr %q", args, r.stderr)
		}
	}
}

// TestThreadsShowNamesOtherNamespaces: a thread with no checkpoint in the
// root namespace (an Eino thread's are under "eino") makes show say which
// namespaces it has.
func TestThreadsShowNamesOtherNamespaces(t *testing.T) {
	env := sqliteEnv(t)
	db := strings.TrimPrefix(env[0], "MEMVAULT_DB=")
	c := config.Default()
	c.DBPath, c.Keys.Primary, c.Embeddings = db, testKey, "none"
	h, err := vault.Open(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"eino", "agent|tool"} {
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"n": 1}, ChannelVersions: map[string]string{"n": h.Saver.NextVersion("")}}
		if _, err := h.Saver.Put(t.Context(), checkpointer.Config{ThreadID: "e1", CheckpointNS: ns}, cp, nil, cp.ChannelVersions); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	r := cli(t, env, "", "threads", "show", "e1").must(t, 1)
	if !strings.Contains(r.stderr, "--ns 'agent|tool', --ns eino") {
		t.Fatalf("threads show without --ns: %q", r.stderr)
	}
	cli(t, env, "", "threads", "show", "e1", "--ns", "eino").must(t, 0)
	r = cli(t, env, "", "threads", "show", "nosuch").must(t, 1)
	if strings.Contains(r.stderr, "--ns") {
		t.Fatalf("a thread with no checkpoint at all: %q", r.stderr)
	}
}

// TestDemoKeyAndFile: the demo refuses an existing --db before opening it,
// and prints the key to export only for a database that is kept.
func TestDemoKeyAndFile(t *testing.T) {
	existing := filepath.Join(t.TempDir(), "mine.db")
	if err := os.WriteFile(existing, []byte("not a demo"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := cli(t, nil, "", "demo", "--db", existing).must(t, 2)
	if !strings.Contains(r.stderr, "demo needs a new file") || r.stdout != "" {
		t.Fatalf("demo --db existing: %+v", r)
	}
	if b, _ := os.ReadFile(existing); string(b) != "not a demo" {
		t.Fatalf("the existing file was changed: %q", b)
	}
	if out := cli(t, nil, "", "demo").must(t, 0).stdout; strings.Contains(out, "export LANGGRAPH_AES_KEY") {
		t.Fatalf("the demo of a temporary database prints a key to keep it:\n%s", out)
	}
	kept := filepath.Join(t.TempDir(), "new.db")
	if out := cli(t, nil, "", "demo", "--db", kept).must(t, 0).stdout; !strings.Contains(out, "export LANGGRAPH_AES_KEY=") {
		t.Fatalf("the demo of a kept database does not print its key:\n%s", out)
	}
}

// TestBenchCheckpointerHelp: the checkpointer bench's help lists only its
// own flags and says it also runs on SQLite.
func TestBenchCheckpointerHelp(t *testing.T) {
	out := cli(t, nil, "", "bench", "checkpointer", "--help").must(t, 0).stdout
	if strings.Contains(out, "--items") || !strings.Contains(out, "SQLite") {
		t.Fatalf("bench checkpointer --help:\n%s", out)
	}
	// Scripts that passed the ignored --items still run.
	cli(t, nil, "", "bench", "checkpointer", "--items", "5", "--backend", "sqlite", "--workload", "messages", "--ops", "get_messages_50", "--duration", "50ms", "--concurrency", "1").must(t, 0)
}

// TestProgressLines: off a terminal (the test's pipe), the long commands
// print plain progress lines on stderr — a start and an end for every
// step — and nothing of it on stdout; keys reencrypt shows each of its
// steps, re-embedding included, and does not tell to run store reembed,
// which it does itself.
func TestProgressLines(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	old := []string{"MEMVAULT_DB=" + db, "LANGGRAPH_AES_KEY=" + testKey}
	cli(t, old, "", "threads", "import", "testdata/thread.jsonl").must(t, 0)
	for _, k := range []string{"a", "b", "c"} {
		cli(t, old, "", "store", "put", "users", "u1", k, `{"text":"hello"}`).must(t, 0)
	}
	rotated := []string{"MEMVAULT_DB=" + db, "LANGGRAPH_AES_KEY=fedcba9876543210fedcba9876543210", "LANGGRAPH_AES_KEY_PREVIOUS=" + testKey}

	wantLines := func(what string, r result, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", what, w, r.stderr)
			}
		}
		if strings.Contains(r.stdout, "memvault: ") {
			t.Errorf("%s: progress on stdout:\n%s", what, r.stdout)
		}
	}
	r := cli(t, rotated, "", "keys", "reencrypt").must(t, 0)
	wantLines("keys reencrypt", r,
		"memvault: re-encrypting checkpoint values and writes…\n",
		"memvault: re-encrypting checkpoint values and writes: done, ",
		"memvault: re-encrypting memories…\n",
		"memvault: re-encrypting memories: done, ",
		"memvault: re-embedding the store's vectors…\n",
		"memvault: re-embedding the store's vectors: done, 3 vectors in ",
		"this run re-embeds them after re-encrypting the values")
	if strings.Contains(r.stderr, "store reembed") || !strings.Contains(r.stdout, "re-embedded 3 vectors") {
		t.Errorf("keys reencrypt:\nstdout %s\nstderr %s", r.stdout, r.stderr)
	}

	new := rotated[:2]
	r = cli(t, new, "", "threads", "export", "golden-thread", "golden-thread")
	wantLines("threads export", r, "memvault: exporting threads…\n", "memvault: exporting threads: done, 1 threads in ")
	file := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(file, []byte(r.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	wantLines("threads import", cli(t, new, "", "threads", "import", file).must(t, 0),
		"memvault: importing checkpoints…\n", "memvault: importing checkpoints: done, 3 checkpoints in ")
	wantLines("threads sweep", cli(t, new, "", "threads", "sweep", "--keep-latest", "1").must(t, 0),
		"memvault: sweeping (keep the latest 1 checkpoints per namespace)…\n", "memvault: sweeping (keep the latest 1 checkpoints per namespace): done, 1 threads scanned (removed 0 threads, 1 checkpoints, 0 pending writes, 1 values) in ")
	wantLines("store reembed", cli(t, new, "", "store", "reembed").must(t, 0))

	if r := cli(t, new, "", "--quiet", "threads", "export", "golden-thread").must(t, 0); r.stderr != "" {
		t.Errorf("--quiet printed %q", r.stderr)
	}
}
