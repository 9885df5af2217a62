package main

import (
	"testing"

	"github.com/memvault/memvault/examples/demoenv"
)

// TestDemo: the run stopped in one process finishes in the next with the
// first process's state, and the file holds none of it in plaintext.
func TestDemo(t *testing.T) {
	demoenv.Check(t, "trpc.db", demo, []string{
		"stopped in approve: a refund needs a human's approval",
		"done: order 1187, 49.90 EUR, approved by Dana, refund sent",
	}, "49.90 EUR", "order 1187", "approved by Dana")
}
