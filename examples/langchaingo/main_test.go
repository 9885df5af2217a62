package main

import (
	"testing"

	"github.com/memvault/memvault/examples/demoenv"
)

// TestDemo: the chain's memory outlives the process, and the file holds
// none of the conversation in plaintext.
func TestDemo(t *testing.T) {
	demoenv.Check(t, "chat.db", demo, []string{
		"agent: refunds take five working days",
		"agent: parcels ship from lisbon",
		"messages in memory: 6",
	}, "parcel 1187", "refunds take", "ship from")
}
