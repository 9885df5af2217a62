package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCarelessZeroLimitIsUsage: `--limit 0` on the store's listing
// commands is a usage error (exit 2), not the default page: the API's
// Limit 0 means "the default" (10 search results, 100 items, 100
// namespaces), so `store search --limit 0` printed ten items to a user
// who asked for none (noticed by the session 22 careless-user pass).
func TestCarelessZeroLimitIsUsage(t *testing.T) {
	dir := t.TempDir()
	env := []string{"MEMVAULT_DB=" + filepath.Join(dir, "m.db"), "LANGGRAPH_AES_KEY=" + testKey, "MEMVAULT_EMBEDDINGS=none"}
	if r := cli(t, env, "", "store", "put", "docs", "a", `{"v":1}`); r.code != 0 {
		t.Fatalf("store put: exit %d: %s", r.code, r.stderr)
	}
	for _, args := range [][]string{
		{"store", "search", "docs", "--limit", "0"},
		{"store", "list", "docs", "--limit", "0"},
		{"store", "namespaces", "--limit", "0"},
	} {
		r := cli(t, env, "", args...)
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "--limit") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 naming --limit and nothing listed", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
}
