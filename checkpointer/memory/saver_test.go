package memory_test

import (
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/checkpointertest"
	"github.com/memvault/memvault/checkpointer/memory"
)

func TestConformance(t *testing.T) {
	checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
		return memory.New(memory.Options{})
	})
}

func TestConformanceIntVersions(t *testing.T) {
	checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
		return memory.New(memory.Options{VersionStyle: checkpointer.VersionInt})
	})
}
