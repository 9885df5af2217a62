package redissaver

import (
	"context"
	"slices"
	"testing"

	"github.com/memvault/memvault/backends/redis/redistest"
)

// TestReviewS28DeletedMarkScansAgainInARunningSaver (session 28 review):
// the documented remedy after a process of an older version wrote pending
// writes (in no thread index) once the mark <prefix>:threads:complete was
// set is to delete the mark: "delete it to scan again" (doc.go), "makes
// the next RowThreads of each process scan again" (indexOlder). A saver
// that ran its scan once keeps a flag of its own and never looks at the
// mark again, so in a long-running process — the one that serves Forget —
// the older version's thread stays unlisted, and Forget leaves its rows.
func TestReviewS28DeletedMarkScansAgainInARunningSaver(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Shared(t, 8).Client(t)
	s, err := New(rdb, Options{Prefix: redistest.Prefix()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pendingWrite(t, s, "carol:1")
	if got := rowThreadIDs(t, s); !slices.Equal(got, []string{"carol:1"}) {
		t.Fatalf("RowThreadIDs = %q, want [carol:1]", got)
	}
	// A process of an older version writes carol:2's pending writes
	// without indexing the thread.
	pendingWrite(t, s, "carol:2")
	if err := rdb.ZRem(ctx, s.d.threadsKey(), "carol:2").Err(); err != nil {
		t.Fatal(err)
	}
	// The operator deletes the mark, as the documentation says.
	if err := rdb.Del(ctx, s.d.indexedKey()).Err(); err != nil {
		t.Fatal(err)
	}
	if got := rowThreadIDs(t, s); !slices.Equal(got, []string{"carol:1", "carol:2"}) {
		t.Errorf("after the mark was deleted, the running saver's RowThreadIDs = %q; want [carol:1 carol:2] (a scan again)", got)
	}
}
