package readmetest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/memvaulttest/readmetest"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/vault"
)

// A README snippet's test: it quotes the snippet (Quoted: here the
// README's first, whose marker is h.Store.Search), runs it with the
// environment a deployment exports (Env), and scans the files for what it
// stored (NoPlaintext). Compiled, not run: Env sets the environment for the
// test's duration, which needs the *testing.T of a test (examples/eino's
// TestREADMESnippet is one); TestExample runs the same body, so that the
// example stays true.
func Example() {
	_ = func(t *testing.T) {
		readmetest.Quoted(t, "../../README.md", "h.Store.Search", "example_test.go", "runSnippet")
		dir := readmetest.Env(t) // MEMVAULT_DB in dir, LANGGRAPH_AES_KEY
		if hits := runSnippet(t); len(hits) != 1 {
			t.Fatalf("%d hits", len(hits))
		}
		readmetest.NoPlaintext(t, dir, "prefers email", "hello")
	}
}

// TestExample is Example's body, run: the README's first snippet, quoted
// by runSnippet, runs and leaves no plaintext in its files.
func TestExample(t *testing.T) {
	readmetest.Quoted(t, "../../README.md", "h.Store.Search", "example_test.go", "runSnippet")
	dir := readmetest.Env(t)
	if hits := runSnippet(t); len(hits) != 1 {
		t.Fatalf("%d hits", len(hits))
	}
	readmetest.NoPlaintext(t, dir, "prefers email", "hello")
}

// runSnippet is the test's copy of the README's snippet, line for line,
// with what the snippet leaves out (checks, a checkpoint) between them.
func runSnippet(t *testing.T) []store.SearchItem {
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(-1),
		ChannelValues: map[string]any{"messages": "hello"}, ChannelVersions: map[string]string{"messages": "1"}}
	md, newVersions := checkpointer.Metadata{"step": -1}, cp.ChannelVersions
	h, err := vault.OpenEnv(ctx)
	must(err)
	defer h.Close()
	next, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: "t1"}, cp, md, newVersions)
	must(err)
	tuple, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "t1"})
	must(err)
	if tuple == nil || tuple.Config.CheckpointID != next.CheckpointID {
		t.Fatalf("read back %+v", tuple)
	}
	err = h.Store.Put(ctx, store.Namespace{"users", "alice"}, "contact", map[string]any{"text": "prefers email"})
	must(err)
	hits, err := h.Store.Search(ctx, store.Namespace{"users"}, store.SearchOptions{Query: "how to reach her"})
	must(err)
	return hits
}

// Quoted passes while every line of the README's snippet is in the
// test's function, in order, and fails once the README changes alone.
// It reads files only, so this example runs it: each call gets a fresh
// zero testing.T in a goroutine of its own (a failing Quoted stops its
// goroutine, as t.Fatal does), and the example prints whether it failed.
func ExampleQuoted() {
	dir, err := os.MkdirTemp("", "memvault-readmetest")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "readme_test.go")
	readme := filepath.Join(dir, "README.md")
	code := "package x\n\nfunc runSnippet(t *testing.T) {\n\th, err := vault.OpenEnv(ctx)\n\tmust(t, err) // not in the README\n\tdefer h.Close()\n}\n"
	if err := os.WriteFile(src, []byte(code), 0o600); err != nil {
		fmt.Println(err)
		return
	}
	quoted := func(snippet string) bool {
		if err := os.WriteFile(readme, []byte("# Use\n\n```go\n"+snippet+"```\n"), 0o600); err != nil {
			fmt.Println(err)
			return false
		}
		t := &testing.T{}
		var wg sync.WaitGroup
		wg.Go(func() { readmetest.Quoted(t, readme, "vault.OpenEnv", src, "runSnippet") })
		wg.Wait()
		return !t.Failed()
	}
	fmt.Println(quoted("h, err := vault.OpenEnv(ctx) // opens the handle\ndefer h.Close()\n"))
	fmt.Println(quoted("h, err := vault.OpenEnv(ctx)\ndefer h.Shutdown()\n"))
	// Output:
	// true
	// false
}
