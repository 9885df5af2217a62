package main

import (
	"os"
	"strings"
	"testing"
)

// TestThreadsImportLongTypeTagNotEchoed: `threads import` of a file whose
// value carries a 64 KiB type tag (a hostile or corrupt file) fails
// naming the line and the channel, in an error line of bounded size, not
// one that quotes the tag whole into the terminal.
func TestThreadsImportLongTypeTagNotEchoed(t *testing.T) {
	export, err := os.ReadFile("testdata/thread.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(export), "\n")
	tag := strings.Repeat("\\u001b[2J", 16<<10)
	bad := strings.Replace(first, `{"type":"json"`, `{"type":"`+tag+`"`, 1)
	if bad == first {
		t.Fatal("test setup: no value in the first line")
	}
	r := cli(t, sqliteEnv(t), bad+"\n", "threads", "import", "-")
	if r.code == 0 {
		t.Fatalf("imported: %s", r.stdout)
	}
	if len(r.stderr) > 1024 || !strings.Contains(r.stderr, "line 1") || !strings.Contains(r.stderr, `channel "messages"`) {
		t.Errorf("stderr of %d bytes (want under 1 KiB, naming line 1 and the channel): %.300s", len(r.stderr), r.stderr)
	}
}
