package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/sqlite"
	"github.com/memvault/memvault/store/storetest"
)

func TestEmbedderGuard(t *testing.T) {
	path := filepath.Join(t.TempDir(), "guard.db")
	storetest.RunEmbedderGuard(t, func(t *testing.T, idx *store.IndexConfig) (store.Store, error) {
		return sqlite.Open(context.Background(), path, sqlite.Options{Index: idx})
	})
}
