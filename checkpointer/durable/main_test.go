package durable_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/durable"
	"github.com/memvault/memvault/checkpointer/memsaver"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// TestMain starts the throwaway PostgreSQL cluster the PostgreSQL cases
// use (not in the kill -9 test's writer: it is given the parent's).
func TestMain(m *testing.M) {
	pgtest.Main(m)
}

// wrap decorates inner in mode, closing the decorator (and inner) when t
// ends.
func wrap(t testing.TB, inner checkpointer.Saver, opt durable.Options) *durable.Saver {
	t.Helper()
	s, err := durable.New(inner, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func newMem(t testing.TB) checkpointer.Saver {
	t.Helper()
	s, err := memsaver.New(memsaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newSQLite(t testing.TB, path string) *sqlitesaver.Saver {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "cp.db")
	}
	s, err := sqlitesaver.Open(context.Background(), path, sqlitesaver.Options{})
	if err != nil {
		t.Fatalf("Open(%q): %v", path, err)
	}
	return s
}

func newPG(t testing.TB) *pgsaver.Saver {
	t.Helper()
	s, err := pgsaver.New(pgtest.Pool(t), pgsaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}
