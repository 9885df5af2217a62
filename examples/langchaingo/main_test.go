package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	for _, f := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, secret := range []string{"1187", "refunds take", "ship from"} {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s holds %q in plaintext", filepath.Base(f), secret)
			}
		}
	}
}
