package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/internal/testkeys"
)

// TestDemo: the chain's memory outlives the process, and the file holds
// none of the conversation in plaintext.
func TestDemo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chat.db")
	var out bytes.Buffer
	if err := demo(t.Context(), &out, path); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"agent: refunds take five working days", "agent: parcels ship from lisbon", "messages in memory: 6"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output lacks %q:\n%s", want, out.String())
		}
	}
	testkeys.NoPlaintext(t, []string{path, path + "-wal"}, "1187", "refunds take", "ship from")
}
