package main

import (
	"testing"

	"github.com/memvault/memvault/examples/demoenv"
)

// TestDemo: the run stopped in one process finishes in the next, and the
// checkpoint, which holds the order in graph state, is sealed.
func TestDemo(t *testing.T) {
	demoenv.Check(t, "eino.db", demo, []string{
		"stopped: a refund needs a human's approval",
		"done: refund 49.90 EUR for order 1187 [checked] [refund sent, approved by Dana]",
	}, "49.90 EUR", "order 1187")
}
