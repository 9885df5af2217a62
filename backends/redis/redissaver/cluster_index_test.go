package redissaver_test

import (
	"context"
	"slices"
	"testing"

	"github.com/memvault/memvault/backends/redis/redissaver"
	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/checkpointer"
)

// TestClusterPutIndex: on a cluster the thread index is in another slot
// than the thread. A saver's first put of a thread adds it to the index
// first (two round trips); its later puts and pending writes of that
// thread are one round trip each (before, every put added the entry
// first: "put of an indexed thread: 2 round trips [zadd evalsha]"). When
// another process deleted the thread meanwhile (taking its entry out),
// the script refuses and the put indexes it again: the thread is listed
// by ListThreads and RowThreadIDs afterwards.
func TestClusterPutIndex(t *testing.T) {
	c := redistest.StartCluster(t, 8)
	prefix := redistest.Prefix()
	rdb := c.Client(t)
	trips := &tripCounter{}
	rdb.AddHook(trips)
	a, err := redissaver.New(rdb, redissaver.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = a.Close() }()
	b, err := redissaver.New(c.Client(t), redissaver.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	ctx := context.Background()
	cfg := checkpointer.Config{ThreadID: "carol"}
	put := func(n int) {
		t.Helper()
		cp := newCheckpoint(a, n)
		next, err := a.Put(ctx, cfg, cp, checkpointer.Metadata{"step": n}, cp.ChannelVersions)
		if err != nil {
			t.Fatal(err)
		}
		cfg = next
	}
	put(0) // indexes the thread, loads the script
	if got := trips.count(func() { put(1) }); len(got) != 1 {
		t.Errorf("put of an indexed thread: %d round trips %v, want 1", len(got), got)
	}
	if got := trips.count(func() {
		if err := a.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "out", Value: "x"}}, "task", ""); err != nil {
			t.Fatal(err)
		}
	}); len(got) > 2 {
		// The first pending writes load their script (EVALSHA, EVAL).
		t.Errorf("pending writes of an indexed thread: %d round trips %v, want 1", len(got), got)
	}
	if err := b.DeleteThread(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	cfg = checkpointer.Config{ThreadID: "carol"}
	put(2)
	var listed []string
	for ti, err := range b.ListThreads(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, ti.ThreadID)
	}
	var rows []string
	for id, err := range b.RowThreadIDs(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, id)
	}
	if !slices.Equal(listed, []string{"carol"}) || !slices.Equal(rows, []string{"carol"}) {
		t.Fatalf("a put after another process deleted the thread: ListThreads %v, RowThreadIDs %v; want [carol] each", listed, rows)
	}
}
