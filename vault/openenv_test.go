package vault

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/store"
)

// secretWords is what the tests below store and then look for in the
// database files.
const secretWords = "prefers email at night"

// putSecrets stores secretWords as a memory and as a checkpoint value.
func putSecrets(t *testing.T, h *Handle) {
	t.Helper()
	ctx := context.Background()
	if err := h.Store.Put(ctx, store.Namespace{"users", "alice"}, "contact", map[string]any{"text": secretWords}); err != nil {
		t.Fatal(err)
	}
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0),
		ChannelValues:   map[string]any{"messages": []any{secretWords}},
		ChannelVersions: map[string]string{"messages": h.Saver.NextVersion("")}}
	if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: "t1"}, cp, checkpointer.Metadata{"step": 0}, cp.ChannelVersions); err != nil {
		t.Fatal(err)
	}
}

// filesHold reports whether any file of dir holds s.
func filesHold(t *testing.T, dir, s string) bool {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}

// TestOpenRefusesPlaintextWhileKeyIsExported is issue 30's first finding:
// the README's `vault.Open(ctx, config.Default())` ran with
// LANGGRAPH_AES_KEY exported and wrote the user's words in clear, since
// Default reads no environment. Now that configuration is refused before
// any file is made, the key never in the error; plaintext on purpose
// (EncryptionOff) still opens — and does write the words in clear, which
// shows the file scan below can see them; OpenEnv, the documented path,
// seals them.
func TestOpenRefusesPlaintextWhileKeyIsExported(t *testing.T) {
	ctx := context.Background()
	t.Setenv("LANGGRAPH_AES_KEY", testkeys.Key)

	refused := t.TempDir()
	c := config.Default()
	c.DBPath = filepath.Join(refused, "agent.db")
	h, err := Open(ctx, c)
	if !errors.Is(err, ErrKeyNotConfigured) {
		if h != nil {
			h.Close()
		}
		t.Fatalf("Open(Default) with the key exported: %v, want ErrKeyNotConfigured", err)
	}
	if strings.Contains(err.Error(), testkeys.Key) || !strings.Contains(err.Error(), "vault.OpenEnv") {
		t.Fatalf("the error shows the key or names no way out: %v", err)
	}
	if entries, _ := os.ReadDir(refused); len(entries) != 0 {
		t.Fatalf("a refused Open made %d files", len(entries))
	}

	plain := t.TempDir()
	c.DBPath = filepath.Join(plain, "agent.db")
	c.Encryption = config.EncryptionOff
	h, err = Open(ctx, c)
	if err != nil {
		t.Fatalf("plaintext on purpose: %v", err)
	}
	putSecrets(t, h)
	h.Close()
	if !filesHold(t, plain, secretWords) {
		t.Fatal("the plaintext database does not hold the words: the scan cannot see plaintext")
	}

	sealed := t.TempDir()
	t.Setenv("MEMVAULT_DB", filepath.Join(sealed, "agent.db"))
	h, err = OpenEnv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.KeyIDs()) == 0 {
		t.Fatal("OpenEnv with the key exported did not encrypt")
	}
	putSecrets(t, h)
	h.Close()
	if filesHold(t, sealed, secretWords) || filesHold(t, sealed, "alice") == false {
		t.Fatalf("OpenEnv's files: the words in clear %v (want false), the namespace in clear %v (want true)", filesHold(t, sealed, secretWords), filesHold(t, sealed, "alice"))
	}
}

// TestREADMEQuotesTheExample: the README's first Go snippet is the start of
// ExampleOpenEnv, line for line, and every README line that opens a handle
// is one of its lines — so the snippet compiles, runs with the key
// exported, and finds no plaintext (the Example's output says so).
func TestREADMEQuotesTheExample(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	body := string(src)
	if i := strings.Index(body, "func ExampleOpenEnv()"); i < 0 {
		t.Fatal("example_test.go has no ExampleOpenEnv")
	} else {
		body = body[i:]
	}
	var example []string
	for _, l := range strings.Split(body, "\n") {
		example = append(example, code(l))
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	if len(blocks) == 0 {
		t.Fatal("README has no Go snippet")
	}
	// The first snippet, in order.
	at := 0
	for _, l := range strings.Split(blocks[0][1], "\n") {
		if l = code(l); l == "" {
			continue
		}
		for at < len(example) && example[at] != l {
			at++
		}
		if at == len(example) {
			t.Fatalf("README's first snippet line %q is not in ExampleOpenEnv (in order)", l)
		}
	}
	opens := 0
	for _, b := range blocks {
		for _, l := range strings.Split(b[1], "\n") {
			if l = code(l); strings.Contains(l, "vault.Open") {
				opens++
				if !strings.Contains(strings.Join(example, "\n"), l) {
					t.Errorf("README line %q opens a handle unlike ExampleOpenEnv", l)
				}
			}
		}
	}
	if opens < 2 {
		t.Fatalf("README opens a handle in %d snippets; this test expects the quick start and ADK's", opens)
	}
}

// code is a Go line without indentation and trailing comment.
func code(l string) string {
	if i := strings.Index(l, "//"); i >= 0 {
		l = l[:i]
	}
	return strings.TrimSpace(l)
}

// TestEveryREADMESnippetIsRun: every Go snippet of the README is run by a
// test with the key exported and its files scanned for plaintext — the
// first by ExampleOpenEnv (TestREADMEQuotesTheExample), each other by a
// test that quotes it with readmetest.Quoted (the examples' modules have
// the frameworks the adapters' snippets need). A snippet no test quotes
// fails here.
func TestEveryREADMESnippetIsRun(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	quoted := regexp.MustCompile(`readmetest\.Quoted\(t, "\.\./\.\./README\.md", "([^"]+)"`)
	tests, err := filepath.Glob("../examples/*/*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	markers := map[string]string{}
	for _, f := range tests {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range quoted.FindAllStringSubmatch(string(b), -1) {
			markers[m[1]] = f
		}
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	for i, b := range blocks[1:] {
		run := false
		for m := range markers {
			run = run || strings.Contains(b[1], m)
		}
		if !run {
			t.Errorf("README Go snippet %d is run by no test (quote it with readmetest.Quoted):\n%s", i+2, b[1])
		}
	}
	if len(blocks) < 5 || len(markers) < 4 {
		t.Fatalf("%d README snippets, %d quoted by the examples' tests (%v)", len(blocks), len(markers), markers)
	}
}
