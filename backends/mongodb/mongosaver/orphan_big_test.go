package mongosaver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/memvault/memvault/backends/mongodb/mongosaver"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/checkpointer"
)

// TestSweepDropsLargeValuesOfThreadsDeletedElsewhere: LangGraph's
// deleteThread deletes a thread's checkpoints and writes, not memvault's
// large-value chunks (memvault_big_values), and no removal found them
// again: a deleted thread's large values stayed stored for good. A sweep
// now drops the chunks, over an hour old, of threads that hold no
// checkpoint; a dry run drops nothing, younger chunks (a put's in flight)
// and a live thread's stay.
func TestSweepDropsLargeValuesOfThreadsDeletedElsewhere(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := mongotest.Database(t)
	s := newSaverOn(t, db, mongosaver.Options{})
	big := strings.Repeat("0123456789abcdef", (mongosaver.MaxDocumentSize+1<<20)/16) // 17 MiB: moved out
	for _, thread := range []string{"gone", "kept"} {
		v := s.NextVersion("")
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
			ChannelValues: map[string]any{"doc": big}, ChannelVersions: map[string]string{"doc": v}}
		if _, err := s.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, checkpointer.Metadata{}, cp.ChannelVersions); err != nil {
			t.Fatal(err)
		}
	}
	chunks := func(thread string) int64 {
		n, err := db.Collection("memvault_big_values").CountDocuments(ctx, bson.D{{Key: "thread_id", Value: thread}})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if chunks("gone") == 0 || chunks("kept") == 0 {
		t.Fatalf("control: no chunks stored (gone %d, kept %d)", chunks("gone"), chunks("kept"))
	}
	// LangGraph's deleteThread, by another program.
	for _, coll := range []string{"checkpoints", "checkpoint_writes"} {
		if _, err := db.Collection(coll).DeleteMany(ctx, bson.D{{Key: "thread_id", Value: "gone"}}); err != nil {
			t.Fatal(err)
		}
	}
	policy := checkpointer.RetentionPolicy{KeepLatest: 5}
	later := time.Now().Add(2 * time.Hour)
	for _, opt := range []checkpointer.SweepOptions{{Now: later, DryRun: true}, {}} { // a dry run; chunks under an hour old
		if _, err := s.Sweep(ctx, policy, opt); err != nil {
			t.Fatal(err)
		}
		if n := chunks("gone"); n == 0 {
			t.Fatalf("sweep %+v dropped the chunks of a deleted thread (a dry run, or chunks under an hour old)", opt)
		}
	}
	if _, err := s.Sweep(ctx, policy, checkpointer.SweepOptions{Now: later}); err != nil {
		t.Fatal(err)
	}
	if n := chunks("gone"); n != 0 {
		t.Fatalf("%d chunks of a thread deleted by LangGraph's deleteThread are still stored after a sweep", n)
	}
	if chunks("kept") == 0 {
		t.Fatal("the sweep dropped a live thread's chunks")
	}
	tup, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "kept"})
	if err != nil || tup == nil || tup.Checkpoint.ChannelValues["doc"] != big {
		t.Fatalf("the live thread after the sweep: %v, %v", tup != nil, err)
	}
}

// TestSweepDropsOrphanChunksOfManyThreads: the sweep finds the threads of
// old chunks through a cursor, a round of threads at a time (one distinct
// reply could not hold ~370 000 ids), so every round's orphans go and a
// live thread in a later round keeps its chunks.
func TestSweepDropsOrphanChunksOfManyThreads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := mongotest.Database(t)
	s := newSaverOn(t, db, mongosaver.Options{})
	const threads, live = 2500, "t01777"
	var docs []any
	for i := range threads {
		docs = append(docs, bson.D{{Key: "thread_id", Value: fmt.Sprintf("t%05d", i)}, {Key: "checkpoint_ns", Value: ""},
			{Key: "key", Value: "k"}, {Key: "seq", Value: 0}, {Key: "data", Value: []byte("chunk")}})
	}
	if _, err := db.Collection("memvault_big_values").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(), ChannelValues: map[string]any{}, ChannelVersions: map[string]string{}}
	if _, err := s.Put(ctx, checkpointer.Config{ThreadID: live}, cp, checkpointer.Metadata{}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Sweep(ctx, checkpointer.RetentionPolicy{KeepLatest: 5}, checkpointer.SweepOptions{Now: time.Now().Add(2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	if err := db.Collection("memvault_big_values").Distinct(ctx, "thread_id", bson.D{}).Decode(&ids); err != nil {
		t.Fatal(err)
	}
	if len(ids) != 1 || ids[0] != live {
		t.Fatalf("after the sweep the chunks of %d threads are left (want only %s): first %v", len(ids), live, ids[:min(len(ids), 5)])
	}
}
