package mongosaver_test

import (
	"context"
	"testing"

	"github.com/memvault/memvault/backends/mongodb/mongosaver"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/checkpointer"
)

// TestSampleTuple: SampleTuple finds nothing in an empty collection and
// the latest checkpoint of a stored thread otherwise, with its values:
// what vault's key check at Open decrypts, instead of listing every
// thread (which read every checkpoint document's ids).
func TestSampleTuple(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := mongosaver.New(mongotest.Database(t), mongosaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if tup, err := s.SampleTuple(ctx); err != nil || tup != nil {
		t.Fatalf("SampleTuple of an empty collection = %v, %v; want nil, nil", tup, err)
	}
	var last string
	for i := range 3 {
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), ChannelValues: map[string]any{"n": int64(i)},
			ChannelVersions: map[string]string{"n": s.NextVersion(last)}}
		last = cp.ChannelVersions["n"]
		if _, err := s.Put(ctx, checkpointer.Config{ThreadID: "t"}, cp, nil, cp.ChannelVersions); err != nil {
			t.Fatal(err)
		}
	}
	tup, err := s.SampleTuple(ctx)
	if err != nil || tup == nil {
		t.Fatalf("SampleTuple = %v, %v", tup, err)
	}
	if tup.Config.ThreadID != "t" || tup.Checkpoint.ChannelValues["n"] != int64(2) {
		t.Fatalf("SampleTuple = thread %q, n %v; want the latest checkpoint of t (n 2)", tup.Config.ThreadID, tup.Checkpoint.ChannelValues["n"])
	}
}
