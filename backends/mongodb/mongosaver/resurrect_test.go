package mongosaver_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/memvault/memvault/backends/mongodb/mongosaver"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/checkpointer"
)

// TestSteadyPutDoesNotResurrectDeletedThread (review, session 21; fixed
// by making the read-free steady put opt-in,
// Options.DangerousAssumeSoleWriter): a
// steady writer's put that inherits a channel from its parent must be
// refused (checkpointer.ErrParentMissing, storing nothing) once the thread
// was deleted, as every driver refuses it (core.NeedsParent: "Every
// driver refuses such a put, storing nothing, when the parent is gone") —
// whoever deleted it: this process, another memvault process, or a
// LangGraph.js/Python MongoDBSaver's deleteThread, which takes no lease
// (README: MongoDB interoperates with LangGraph's MongoDBSaver on the same
// collections). putcache.go serves the put from the document it last
// wrote, and so rewrites the deleted values.
func TestSteadyPutDoesNotResurrectDeletedThread(t *testing.T) {
	for _, tc := range []struct {
		name string
		del  func(ctx context.Context, t *testing.T, a, b *mongosaver.Saver, rawDelete func(thread string))
	}{
		{"this process", func(ctx context.Context, t *testing.T, a, _ *mongosaver.Saver, _ func(string)) {
			if err := a.DeleteThread(ctx, "steady"); err != nil {
				t.Fatal(err)
			}
		}},
		{"another memvault process", func(ctx context.Context, t *testing.T, _, b *mongosaver.Saver, _ func(string)) {
			if err := b.DeleteThread(ctx, "steady"); err != nil {
				t.Fatal(err)
			}
		}},
		{"LangGraph MongoDBSaver deleteThread (no lease)", func(ctx context.Context, t *testing.T, _, _ *mongosaver.Saver, raw func(string)) {
			raw("steady")
		}},
		{"LangGraph.js MongoDBSaver.deleteThread run by node", func(ctx context.Context, t *testing.T, _, _ *mongosaver.Saver, raw func(string)) {
			raw("") // marks the case: the test runs delete.mjs
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if strings.Contains(tc.name, "node") {
				requireNode(t)
			}
			ctx := context.Background()
			db := mongotest.Database(t)
			a, err := mongosaver.New(db, mongosaver.Options{LeaseTTL: 5 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			b, err := mongosaver.New(db, mongosaver.Options{LeaseTTL: 5 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			// LangGraph's MongoDBSaver.deleteThread: deleteMany on both
			// collections by thread_id, no lease.
			raw := func(thread string) {
				if thread == "" {
					runJS(t, mongotest.URI(t), "delete.mjs", db.Name(), "steady")
					return
				}
				for _, coll := range []string{"checkpoints", "checkpoint_writes"} {
					if _, err := db.Collection(coll).DeleteMany(ctx, bson.D{{Key: "thread_id", Value: thread}}); err != nil {
						t.Fatal(err)
					}
				}
			}
			// Step 0 writes both channels; each later step changes "a" only
			// and inherits "secret" from its parent.
			cfg := checkpointer.Config{ThreadID: "steady"}
			va, vs := a.NextVersion(""), a.NextVersion("")
			put := func(s *mongosaver.Saver, step int, newVersions map[string]string) (checkpointer.Config, error) {
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
					ChannelValues:   map[string]any{"a": int64(step), "secret": "carol takes insulin"},
					ChannelVersions: map[string]string{"a": va, "secret": vs}}
				return s.Put(ctx, cfg, cp, checkpointer.Metadata{}, newVersions)
			}
			if cfg, err = put(a, 0, map[string]string{"a": va, "secret": vs}); err != nil {
				t.Fatal(err)
			}
			for step := 1; step < 4; step++ { // the second put scans; the third and fourth are steady
				va = a.NextVersion(va)
				if cfg, err = put(a, step, map[string]string{"a": va}); err != nil {
					t.Fatal(err)
				}
			}
			tc.del(ctx, t, a, b, raw)
			if tu, err := b.GetTuple(ctx, checkpointer.Config{ThreadID: "steady"}); err != nil || tu != nil {
				t.Fatalf("control: the thread after its deletion reads %+v, %v; want nothing", tu, err)
			}
			va = a.NextVersion(va)
			_, perr := put(a, 4, map[string]string{"a": va})
			tu, err := b.GetTuple(ctx, checkpointer.Config{ThreadID: "steady"})
			if err != nil {
				t.Fatal(err)
			}
			if tu != nil {
				t.Fatalf("a put continuing the deleted thread's last checkpoint (it inherits \"secret\") returned %v and the deleted thread reads again: secret=%q, a=%v; want checkpointer.ErrParentMissing and nothing stored",
					perr, tu.Checkpoint.ChannelValues["secret"], tu.Checkpoint.ChannelValues["a"])
			}
			if !errors.Is(perr, checkpointer.ErrParentMissing) {
				t.Fatalf("the put on the deleted parent: %v; want checkpointer.ErrParentMissing", perr)
			}
		})
	}
}
