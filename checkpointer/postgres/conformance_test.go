package postgres_test

import (
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/checkpointertest"
	"github.com/memvault/memvault/checkpointer/postgres"
)

func TestConformance(t *testing.T) {
	checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
		s, _ := newSaver(t, postgres.Options{})
		return s
	})
}

func TestConformanceEncrypted(t *testing.T) {
	checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
		s, _ := newSaver(t, postgres.Options{Serde: encrypted(t)})
		return s
	})
}
