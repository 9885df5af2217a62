package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/internal/testkeys"
)

// TestDemo: the run stopped in one process finishes in the next with the
// first process's state, and the file holds none of it in plaintext.
func TestDemo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trpc.db")
	var out bytes.Buffer
	if err := demo(t.Context(), &out, path); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"stopped in approve: a refund needs a human's approval", "done: order 1187, 49.90 EUR, approved by Dana, refund sent"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output lacks %q:\n%s", want, out.String())
		}
	}
	testkeys.NoPlaintext(t, []string{path, path + "-wal"}, "49.90", "order 1187", "approved by Dana")
}
