package mongosaver_test

import (
	"context"
	"testing"

	"github.com/memvault/memvault/backends/mongodb/mongosaver"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

func TestMain(m *testing.M) { mongotest.Main(m) }

// newSaver returns a set-up Saver over a fresh database of its own on the
// test FerretDB.
func newSaver(t testing.TB, opt mongosaver.Options) *mongosaver.Saver {
	t.Helper()
	return newSaverOn(t, mongotest.Database(t), opt)
}

// newSaverOn returns a set-up Saver over db, closed when the test ends.
func newSaverOn(t testing.TB, db *mongo.Database, opt mongosaver.Options) *mongosaver.Saver {
	t.Helper()
	s, err := mongosaver.New(db, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
