package mongosaver_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/memvaulttest/childproc"
)

// childArg is the argument of the tests' child processes (this test
// binary, started again by childproc): the database they work in, and
// what else each needs.
type childArg struct {
	URI, DB string
	// Thread and Parent: the thread and checkpoint TestLeaseChild
	// continues.
	Thread, Parent string
	// Keys is the SQLite key table of the subjects' keys; "" for a
	// plaintext saver.
	Keys string
}

// startChild starts test in a child process working in db.
func startChild(t *testing.T, test string, db *mongo.Database, arg childArg) *childproc.Child {
	t.Helper()
	arg.URI, arg.DB = mongotest.URI(t), db.Name()
	return childproc.Start(t, test, arg)
}

// childDatabase reports whether this process is a child started for t's
// test and, when it is, returns its argument and its database, on a
// client disconnected when t ends.
func childDatabase(t *testing.T) (childArg, *mongo.Database, bool) {
	t.Helper()
	var arg childArg
	if !childproc.Arg(t, &arg) {
		return arg, nil, false
	}
	client, err := mongo.Connect(options.Client().ApplyURI(arg.URI))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	return arg, client.Database(arg.DB), true
}
