package durable_test

import (
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/checkpointertest"
	"github.com/memvault/memvault/checkpointer/durable"
)

// The conformance suite every saver runs, on the decorator in each mode
// over each backend: reads wait for the thread's queue, so the contract
// holds however the writes were queued.
func TestConformance(t *testing.T) {
	backends := []struct {
		name string
		open func(t *testing.T) checkpointer.Saver
	}{
		{"memory", func(t *testing.T) checkpointer.Saver { return newMem(t) }},
		{"sqlite", func(t *testing.T) checkpointer.Saver { return newSQLite(t, "") }},
		{"postgres", func(t *testing.T) checkpointer.Saver { return newPG(t) }},
	}
	for _, b := range backends {
		for _, mode := range []durable.Mode{durable.Sync, durable.Async, durable.Exit} {
			t.Run(b.name+"/"+mode.String(), func(t *testing.T) {
				checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
					return wrap(t, b.open(t), durable.Options{Mode: mode})
				})
			})
		}
	}
}
