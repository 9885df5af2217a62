package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/internal/testkeys"
)

// TestDemo: the run stopped in one process finishes in the next, and the
// file holds none of it in plaintext.
func TestDemo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "eino.db")
	var out bytes.Buffer
	if err := demo(t.Context(), &out, path); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"stopped: a refund needs a human's approval", "done: refund 49.90 EUR for order 1187 [checked] [refund sent, approved by Dana]"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output lacks %q:\n%s", want, out.String())
		}
	}
	// The checkpoint holds the order (graph state): sealed.
	testkeys.NoPlaintext(t, []string{path, path + "-wal"}, "49.90", "order 1187")
}
