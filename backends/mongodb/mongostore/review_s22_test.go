package mongostore_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/memvault/memvault/backends/mongodb/mongostore"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/engine"
	"github.com/memvault/memvault/store/vecindex"
)

// TestReviewS22MongoSnapshotSizeClaimAllocation (session 22 review): the
// MongoDB twin of redisstore's TestRedisIndexStateClaimsSizeAllocation,
// whose fix (SnapshotSize bounded by the list's real memory) went to
// Redis only. mongostore's SnapshotSize sums the "size" field stored in
// each <coll>.index_snapshot document — a stored number, not the bytes —
// and the coverage's item count (code_items in <coll>.index) caps it; a
// loading store reserves its index from them (vecindex loadSnapshot:
// min(size, budget)/perCode codes, capped by items) before it reads a
// part. With both set to 2^40 on a store of 300 items, the first search
// of a store opened after allocates far more than the honest one (the
// rules: "no allocation sized by a caller's number"). Since the fix a
// claim reserves at most what 2 MiB a stored part could hold.
func TestReviewS22MongoSnapshotSizeClaimAllocation(t *testing.T) {
	mongostore.NoFloatCopy(t)
	minCodes := vecindex.SnapshotMinCodes
	vecindex.SnapshotMinCodes = 64
	t.Cleanup(func() { vecindex.SnapshotMinCodes = minCodes })
	ctx := context.Background()
	db := mongotest.Database(t)
	idx := &store.IndexConfig{Embedder: denseEmbedder{64}, Fields: []string{"text"}}
	open := func() *mongostore.Store { return newStore(t, db, mongostore.Options{Index: idx}) }
	w := open()
	var ops []store.Op
	for i := range 300 {
		ops = append(ops, store.PutOp{Namespace: store.Namespace{"docs"}, Key: fmt.Sprintf("k%03d", i), Value: map[string]any{"text": fmt.Sprintf("text %d", i)}})
	}
	if _, err := w.Batch(ctx, ops); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Search(ctx, nil, store.SearchOptions{Query: "text 4", Limit: 3}); err != nil {
		t.Fatal(err) // loads every code, stores the snapshot
	}
	names, err := db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var snaps, state string
	for _, n := range names {
		switch {
		case strings.HasSuffix(n, ".index_snapshot"):
			snaps = n
		case strings.HasSuffix(n, ".index"):
			state = n
		}
	}
	if n, err := db.Collection(snaps).CountDocuments(ctx, bson.D{}); snaps == "" || state == "" || err != nil || n == 0 {
		t.Fatalf("no snapshot stored (collections %v): %d parts, %v", names, n, err)
	}
	firstSearch := func() (uint64, *vecindex.Stats) {
		s := open()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if _, err := s.Search(ctx, nil, store.SearchOptions{Query: "text 4", Limit: 3}); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc, engine.IndexStats(s.Engine)
	}
	honest, st := firstSearch()
	if st.Snapshots.Load() != 1 {
		t.Fatalf("control: the snapshot was not loaded (%d snapshot loads, %d full)", st.Snapshots.Load(), st.FullLoads.Load())
	}
	if _, err := db.Collection(snaps).UpdateMany(ctx, bson.D{}, bson.D{{Key: "$set", Value: bson.D{{Key: "size", Value: int64(1) << 40}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection(state).UpdateMany(ctx, bson.D{{Key: "code_items", Value: bson.D{{Key: "$exists", Value: true}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "code_items", Value: int64(1) << 40}}}}); err != nil {
		t.Fatal(err)
	}
	claimed, _ := firstSearch()
	t.Logf("first search allocated %d bytes with the true sizes, %d with size = code_items = 2^40", honest, claimed)
	// What a claim can still reserve: up to 2 MiB of codes per part
	// actually stored (SnapshotSize's bound, maxSnapshotPart), ~22 MiB for
	// this one-part snapshot — not the 550 MiB the claim alone sized.
	if claimed > 16*honest+(32<<20) {
		t.Fatalf("stored claims size = code_items = 2^40 made a fresh store's first search allocate %.1f MiB (%.1f MiB with the true sizes) for a store of 300 items",
			float64(claimed)/(1<<20), float64(honest)/(1<<20))
	}
}
