package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/internal/testkeys"
)

// TestDemo: the third turn, in a new "process" on the same encrypted file,
// sees the first two, and the file holds none of the conversation in
// plaintext.
func TestDemo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "adk.db")
	var out bytes.Buffer
	if err := demo(t.Context(), &out, path); err != nil {
		t.Fatal(err)
	}
	want := "agent: I have 3 message(s) from you: my order 1187 arrived broken / please send a replacement / any update?"
	if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "stored events: 6") ||
		!strings.Contains(out.String(), "remembered: my order 1187 arrived broken") {
		t.Fatalf("output:\n%s", out.String())
	}
	testkeys.NoPlaintext(t, []string{path, path + "-wal"}, "1187", "replacement", "any update")
}
