package main

import (
	"testing"

	"github.com/memvault/memvault/examples/demoenv"
)

// TestDemo: the third turn, in a new "process" on the same encrypted file,
// sees the first two, the first session is remembered, and the file holds
// none of the conversation in plaintext.
func TestDemo(t *testing.T) {
	demoenv.Check(t, "adk.db", demo, []string{
		"agent: I have 3 message(s) from you: my order 1187 arrived broken / please send a replacement / any update?",
		"stored events: 6",
		"remembered: my order 1187 arrived broken",
	}, "order 1187", "replacement", "any update")
}
