package mongosaver_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/memvault/memvault/backends/mongodb/mongosaver"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/checkpointertest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
)

// The suites run in parallel, each on databases of its own: most of
// their time is spent waiting on the server, one at a time would take
// several minutes under -race.

func TestConformance(t *testing.T) {
	t.Parallel()
	checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
		return newSaver(t, mongosaver.Options{})
	})
}

// TestConformanceSoleWriter: the suite with steady puts served from what
// a kept lease remembers (Options.DangerousAssumeSoleWriter; the suite's
// savers are the only writers).
func TestConformanceSoleWriter(t *testing.T) {
	t.Parallel()
	checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
		return newSaver(t, mongosaver.Options{DangerousAssumeSoleWriter: true})
	})
}

func TestConformanceEncrypted(t *testing.T) {
	t.Parallel()
	checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
		return newSaver(t, mongosaver.Options{Serde: testkeys.Encrypting(t)})
	})
}

// TestConformanceSubjects runs the suite with per-subject keys.
func TestConformanceSubjects(t *testing.T) {
	t.Parallel()
	checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
		return newSaver(t, mongosaver.Options{Serde: testkeys.Subjects(t)})
	})
}

// TestForeignDocuments: checkpoint documents another LangGraph writer
// stored (here as JS's MongoDBSaver does: type "json", metadata a
// document, no writes) read as on every other backend
// (checkpointertest.RunForeignDocuments).
//
// The suite's document names its channels' versions with no values, as
// a SQL writer's does (values in a table of their own, looked up by
// version). In this layout every writer — Python, JS, memvault — keeps a
// checkpoint's values inline, so such a document read as is has no value
// for its channels (Python reads it so too). StoreDocument therefore
// writes what a MongoDB writer writes for it: the document with the
// values of the versions it names, read from its parent, inline; the
// "v" key, the field the suite is about, is stored as given.
func TestForeignDocuments(t *testing.T) {
	checkpointertest.RunForeignDocuments(t, func(t *testing.T) (checkpointer.Saver, checkpointertest.StoreDocument) {
		db := mongotest.Database(t)
		s, err := mongosaver.New(db, mongosaver.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Setup(t.Context()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s, func(t *testing.T, thread, ns, id, parent string, doc []byte) {
			var p any
			if parent != "" {
				p = parent
			}
			doc = inlineParentValues(t, s, thread, ns, parent, doc)
			if _, err := db.Collection("checkpoints").InsertOne(t.Context(), bson.D{{Key: "thread_id", Value: thread},
				{Key: "checkpoint_ns", Value: ns}, {Key: "checkpoint_id", Value: id}, {Key: "parent_checkpoint_id", Value: p},
				{Key: "type", Value: "json"}, {Key: "checkpoint", Value: bson.Binary{Data: doc}},
				{Key: "metadata", Value: bson.D{}}}); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// inlineParentValues returns doc (a checkpoint document's JSON) with the
// values of parent's channels, read through s, inline in channel_values
// where doc names the same version.
func inlineParentValues(t *testing.T, s *mongosaver.Saver, thread, ns, parent string, doc []byte) []byte {
	t.Helper()
	if parent == "" {
		return doc
	}
	tu, err := s.GetTuple(t.Context(), checkpointer.Config{ThreadID: thread, CheckpointNS: ns, CheckpointID: parent})
	if err != nil || tu == nil {
		t.Fatalf("parent %s: %v, %v", parent, tu, err)
	}
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	versions, _ := m["channel_versions"].(map[string]any)
	values := map[string]any{}
	for ch, v := range versions {
		if fmt.Sprint(v) == fmt.Sprint(tu.Checkpoint.ChannelVersions[ch]) {
			if val, ok := tu.Checkpoint.ChannelValues[ch]; ok {
				values[ch] = val
			}
		}
	}
	m["channel_values"] = values
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
