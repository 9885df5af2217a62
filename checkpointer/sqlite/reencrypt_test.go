package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/checkpointertest"
	"github.com/memvault/memvault/checkpointer/sqlite"
	"github.com/memvault/memvault/serde"
)

func TestReencrypt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rotate.db")
	checkpointertest.RunReencrypt(t, func(t *testing.T, s serde.Serializer) checkpointer.Saver {
		sv, err := sqlite.Open(context.Background(), path, sqlite.Options{Serde: s})
		if err != nil {
			t.Fatal(err)
		}
		return sv
	})
}

func TestErasure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "erase.db")
	checkpointertest.RunErasure(t, nil, func(t *testing.T, s serde.Serializer) checkpointer.Saver {
		sv, err := sqlite.Open(context.Background(), path, sqlite.Options{Serde: s})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sv.Close() })
		return sv
	})
}
