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

// TestDocumentLimit: MongoDB refuses documents over 16 MiB and FerretDB
// stores them, so the driver keeps to the limit itself. A checkpoint
// whose values exceed it is stored with its largest values moved out of
// the document (memvault_big_values) and read back whole, continued,
// copied and deleted with them; a pending write over the limit fails
// with ErrTooLarge and stores nothing. (Before: a 17 MiB document was
// stored, which a real MongoDB refuses.)
func TestDocumentLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := mongotest.Database(t)
	s := newSaverOn(t, db, mongosaver.Options{})
	big := strings.Repeat("0123456789abcdef", (mongosaver.MaxDocumentSize+1<<20)/16) // 17 MiB
	v := s.NextVersion("")
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
		ChannelValues: map[string]any{"doc": big, "note": "small"}, ChannelVersions: map[string]string{"doc": v, "note": v}}
	cfg, err := s.Put(ctx, checkpointer.Config{ThreadID: "big"}, cp, checkpointer.Metadata{}, cp.ChannelVersions)
	if err != nil {
		t.Fatalf("Put of a %d-byte value: %v", len(big), err)
	}
	var raw bson.Raw
	if err := db.Collection("checkpoints").FindOne(ctx, bson.D{{Key: "checkpoint_id", Value: cfg.CheckpointID}}).Decode(&raw); err != nil {
		t.Fatal(err)
	}
	if len(raw) > mongosaver.MaxDocumentSize {
		t.Fatalf("checkpoint document is %d bytes, over MongoDB's %d", len(raw), mongosaver.MaxDocumentSize)
	}
	check := func(cfg checkpointer.Config, want map[string]any) {
		t.Helper()
		tu, err := s.GetTuple(ctx, cfg)
		if err != nil || tu == nil {
			t.Fatalf("GetTuple %v: %v, %v", cfg, tu, err)
		}
		for ch, w := range want {
			if got, _ := tu.Checkpoint.ChannelValues[ch].(string); got != w {
				t.Fatalf("%s of %v: %d bytes back, want %d", ch, cfg, len(got), len(w.(string)))
			}
		}
	}
	check(cfg, map[string]any{"doc": big, "note": "small"})

	// A continuation inherits the large value.
	v2 := s.NextVersion(v)
	cp2 := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(1), TS: time.Now(),
		ChannelValues: map[string]any{"doc": big, "note": "changed"}, ChannelVersions: map[string]string{"doc": v, "note": v2}}
	cfg2, err := s.Put(ctx, cfg, cp2, checkpointer.Metadata{}, map[string]string{"note": v2})
	if err != nil {
		t.Fatal(err)
	}
	check(cfg2, map[string]any{"doc": big, "note": "changed"})
	if err := s.CopyThread(ctx, "big", "big-copy"); err != nil {
		t.Fatal(err)
	}
	check(checkpointer.Config{ThreadID: "big-copy"}, map[string]any{"doc": big, "note": "changed"})

	err = s.PutWrites(ctx, cfg2, []checkpointer.Write{{Channel: "note", Value: "fine"}, {Channel: "doc", Value: big}}, "task", "")
	if !errors.Is(err, mongosaver.ErrTooLarge) {
		t.Fatalf("PutWrites of a %d-byte value: %v, want ErrTooLarge", len(big), err)
	}
	if tu, err := s.GetTuple(ctx, cfg2); err != nil || len(tu.PendingWrites) != 0 {
		t.Fatalf("after the refused writes: %v, %v; want no pending write stored", tu, err)
	}

	// Deleting the threads deletes their large values.
	for _, th := range []string{"big", "big-copy"} {
		if err := s.DeleteThread(ctx, th); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := db.Collection("memvault_big_values").CountDocuments(ctx, bson.D{}); err != nil || n != 0 {
		t.Fatalf("%d chunks of large values left after the threads were deleted (%v)", n, err)
	}
}
