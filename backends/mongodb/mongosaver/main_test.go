package mongosaver_test

import (
	"context"
	"testing"

	"github.com/memvault/memvault/backends/mongodb/mongosaver"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
)

func TestMain(m *testing.M) { mongotest.Main(m) }

// newSaver returns a set-up Saver over a fresh database of its own on the
// test FerretDB.
func newSaver(t testing.TB, opt mongosaver.Options) *mongosaver.Saver {
	t.Helper()
	s, err := mongosaver.New(mongotest.Database(t), opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
