package mongosaver_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/memvault/memvault/backends/mongodb/mongosaver"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/memvaulttest/testkeys"
)

// TestChannelStateSealedInRawStorage is, for MongoDB, the storage half of
// the tRPC adapter's TestReviewS30PausedGraphStateSealed (which runs on
// memory, SQLite and PostgreSQL only: the adapter's module does not
// depend on the MongoDB backend): the adapter moves a paused graph's
// state out of metadata into a channel of its own, "trpc:extra"; here a
// checkpoint with such a channel, and a pending write, are stored by an
// encrypting saver, and no document of the database holds their text.
func TestChannelStateSealedInRawStorage(t *testing.T) {
	ctx := context.Background()
	const secret = "diagnosis-type-2-diabetes-raw"
	db := mongotest.Database(t)
	s := newSaverOn(t, db, mongosaver.Options{Serde: testkeys.Encrypting(t)})
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
		ChannelValues:   map[string]any{"trpc:extra": map[string]any{"graph_interrupt_inputs": map[string]any{"intake": secret}}},
		ChannelVersions: map[string]string{"trpc:extra": s.NextVersion("")}}
	cfg, err := s.Put(ctx, checkpointer.Config{ThreadID: "patient-7"}, cp, checkpointer.Metadata{"source": "loop", "step": 0}, cp.ChannelVersions)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "note", Value: secret}}, "task-1", ""); err != nil {
		t.Fatal(err)
	}
	if tp, err := s.GetTuple(ctx, cfg); err != nil || tp == nil || !strings.Contains(fmt.Sprint(tp.Checkpoint.ChannelValues), secret) {
		t.Fatalf("the checkpoint does not read back: %v, %v", tp, err)
	}
	names, err := db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	docs := 0
	for _, name := range names {
		cur, err := db.Collection(name).Find(ctx, bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		for cur.Next(ctx) {
			docs++
			if bytes.Contains(cur.Current, []byte(secret)) {
				t.Errorf("a document of %s holds the channel's state in plaintext: %.300s", name, cur.Current.String())
			}
		}
		if err := cur.Err(); err != nil {
			t.Fatal(err)
		}
		_ = cur.Close(ctx)
	}
	if docs == 0 {
		t.Fatal("no document read: the test proves nothing")
	}
}
