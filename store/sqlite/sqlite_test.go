package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/storetest"
)

func openStore(t testing.TB, path string, opts Options) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("Open(%q): %v", path, err)
	}
	return s
}

func runConformance(t *testing.T, sd func(t *testing.T) serde.Serializer) {
	cfgOpts := func(t *testing.T, cfg storetest.Config) Options {
		return Options{Index: cfg.Index, TTL: cfg.TTL, Now: cfg.Now, Serde: sd(t)}
	}
	t.Run("Memory", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T, cfg storetest.Config) store.Store {
			return openStore(t, ":memory:", cfgOpts(t, cfg))
		})
	})
	t.Run("File", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T, cfg storetest.Config) store.Store {
			return openStore(t, filepath.Join(t.TempDir(), "store.db"), cfgOpts(t, cfg))
		})
	})
}

func TestConformance(t *testing.T) {
	runConformance(t, func(*testing.T) serde.Serializer { return nil })
}
