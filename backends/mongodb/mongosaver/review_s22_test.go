package mongosaver_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/memvault/memvault/backends/mongodb/mongosaver"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/checkpointer"
)

// TestReviewS22DeleteBetweenReadAndWriteResurrects (session 22 review):
// the session 21 fix makes every put read first (default, without
// DangerousAssumeSoleWriter), so a put continuing a thread that
// LangGraph's MongoDBSaver.deleteThread (a deleteMany by thread_id, no
// lease) deleted finds its parent gone. But the read and the write are
// two commands: a deleteThread that lands between them (here through the
// test hook between the put's read and its write) is not seen, and the
// put writes a checkpoint holding the deleted parent's inherited values —
// the deleted thread reads again with "secret". README (MongoDB): "without
// it every put reads first … because a thread deleted by LangGraph's saver
// under a kept lease was written back by the next put, deleted values
// included"; checkpointer's promise: a put whose parent is gone fails
// with ErrParentMissing and stores nothing.
func TestReviewS22DeleteBetweenReadAndWriteResurrects(t *testing.T) {
	ctx := context.Background()
	db := mongotest.Database(t)
	s, err := mongosaver.New(db, mongosaver.Options{LeaseTTL: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cfg := checkpointer.Config{ThreadID: "racy"}
	va, vs := s.NextVersion(""), s.NextVersion("")
	put := func(step int, newVersions map[string]string) (checkpointer.Config, error) {
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
			ChannelValues:   map[string]any{"a": int64(step), "secret": "carol takes insulin"},
			ChannelVersions: map[string]string{"a": va, "secret": vs}}
		return s.Put(ctx, cfg, cp, checkpointer.Metadata{}, newVersions)
	}
	if cfg, err = put(0, map[string]string{"a": va, "secret": vs}); err != nil {
		t.Fatal(err)
	}
	va = s.NextVersion(va)
	if cfg, err = put(1, map[string]string{"a": va}); err != nil {
		t.Fatal(err)
	}
	// LangGraph's deleteThread, run by another program while the next put
	// is between its read and its write.
	mongosaver.SetAfterPutRead(s, func() {
		mongosaver.SetAfterPutRead(s, nil)
		for _, coll := range []string{"checkpoints", "checkpoint_writes"} {
			if _, err := db.Collection(coll).DeleteMany(ctx, bson.D{{Key: "thread_id", Value: "racy"}}); err != nil {
				t.Error(err)
			}
		}
	})
	va = s.NextVersion(va)
	_, perr := put(2, map[string]string{"a": va}) // inherits "secret" from its parent
	other, err := mongosaver.New(db, mongosaver.Options{LeaseTTL: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tu, err := other.GetTuple(ctx, checkpointer.Config{ThreadID: "racy"})
	if err != nil {
		t.Fatal(err)
	}
	if tu != nil {
		t.Fatalf("a put whose parent was deleted between its read and its write returned %v and the deleted thread reads again: secret=%q; want checkpointer.ErrParentMissing and nothing stored",
			perr, tu.Checkpoint.ChannelValues["secret"])
	}
	if !errors.Is(perr, checkpointer.ErrParentMissing) {
		t.Fatalf("the put: %v; want checkpointer.ErrParentMissing", perr)
	}
}
