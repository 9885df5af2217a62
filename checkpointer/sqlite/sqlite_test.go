package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/checkpointertest"
	"github.com/memvault/memvault/serde"
)

func openSaver(t testing.TB, path string, opts Options) *Saver {
	t.Helper()
	s, err := Open(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("Open(%q): %v", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func runConformance(t *testing.T, sd func(t *testing.T) serde.Serializer) {
	t.Run("Memory", func(t *testing.T) {
		checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
			return openSaver(t, ":memory:", Options{Serde: sd(t)})
		})
	})
	t.Run("File", func(t *testing.T) {
		checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
			return openSaver(t, filepath.Join(t.TempDir(), "cp.db"), Options{Serde: sd(t)})
		})
	})
}

func TestConformance(t *testing.T) {
	runConformance(t, func(*testing.T) serde.Serializer { return nil })
}
