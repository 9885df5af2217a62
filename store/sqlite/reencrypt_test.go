package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/sqlite"
	"github.com/memvault/memvault/store/storetest"
)

func TestReencrypt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rotate.db")
	storetest.RunReencrypt(t, func(t *testing.T, s serde.Serializer) store.Store {
		st, err := sqlite.Open(context.Background(), path, sqlite.Options{Serde: s})
		if err != nil {
			t.Fatal(err)
		}
		return st
	})
}

func TestErasure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "erase.db")
	storetest.RunErasure(t, nil, func(t *testing.T, s serde.Serializer) store.Store {
		st, err := sqlite.Open(context.Background(), path, sqlite.Options{Serde: s})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	})
}
