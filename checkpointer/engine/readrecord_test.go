package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/memsaver"
)

// TestReadRecordRefusedWithoutReadRecords: a read whose context carries
// an audit record (checkpointer.WithReadRecord) on a driver that cannot
// insert it in the read's transaction (memsaver: no ReadRecords) fails
// with ErrUnsupported and reads nothing, rather than read unrecorded.
func TestReadRecordRefusedWithoutReadRecords(t *testing.T) {
	s, err := memsaver.New(memsaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(1), ChannelValues: map[string]any{"a": "1"}, ChannelVersions: map[string]string{"a": "1"}}
	if _, err := s.Put(ctx, checkpointer.Config{ThreadID: "t"}, cp, checkpointer.Metadata{}, map[string]string{"a": "1"}); err != nil {
		t.Fatal(err)
	}
	if s.RecordsReadsInTx() {
		t.Fatal("memsaver says it records reads in their transaction")
	}
	rctx := checkpointer.WithReadRecord(ctx, &checkpointer.RecordRow{Table: `"pending"`, Columns: []string{"id"}, Values: []any{"x"}})
	if tp, err := s.GetTuple(rctx, checkpointer.Config{ThreadID: "t"}); !errors.Is(err, errors.ErrUnsupported) || tp != nil {
		t.Fatalf("GetTuple with a read record = %v, %v; want nothing and ErrUnsupported", tp, err)
	}
	n := 0
	for tp, err := range s.List(rctx, &checkpointer.Config{ThreadID: "t"}, checkpointer.ListOptions{Limit: 10}) {
		if tp != nil {
			t.Fatalf("List with a read record yielded %v", tp)
		}
		if !errors.Is(err, errors.ErrUnsupported) {
			t.Fatalf("List with a read record: %v, want ErrUnsupported", err)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("List with a read record yielded %d errors, want 1", n)
	}
}
