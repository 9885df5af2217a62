package redisstore_test

import (
	"slices"
	"testing"

	"github.com/memvault/memvault/backends/redis/redisstore"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/engine"
	"github.com/memvault/memvault/store/vecindex"
)

// TestReviewS22WhyRedisForgedCodeWasRefused (session 22 review) explains
// why TestRedisSnapshotWithWrongCodeNotTrusted passes on Redis while the
// same forgery is documented undetected on SQLite (README: "What is not
// detected: a writer … that replaces an item's code in the snapshot with
// another well-formed one and writes its checksum too"). It is not that
// Redis checks codes: the forger rewrote {P}:ixs but not the ssize field
// of {P}:ix, and the rewritten snapshot is 8 bytes shorter in its sign
// part (the forged item's updated_at is 1: one varint byte, not nine) and
// gains a part of middle parts (EncodeCode's code carries one; the
// original had none). A load that reads middle parts behind the search
// checks that the bytes left after the sign parts can be middle parts of
// that many codes (midPartsFit(ssize - read, 300, dims)): 8 bytes for 300
// codes cannot, so the load is refused as malformed and every code row is
// read. SQLite's SnapshotSize is the rows' real size: there the forged
// snapshot loads (TestReviewS22ForgedCodeMissedOnSQLite). With ssize set
// to the forged snapshot's size — one more HSET for the same writer —
// Redis loads the forged snapshot too (asserted). On this fixture k004 is
// still found then (logged, not asserted): Redis has no FineReader, so
// refining re-reads each candidate's whole code, sign bits included, from
// its item hash, where SQLite refines from the fine parts alone and keeps
// the snapshot's sign bits. Passes on main.
func TestReviewS22WhyRedisForgedCodeWasRefused(t *testing.T) {
	const dims = 64
	emb := denseEmbedder{dims}
	ctx, rdb, p, open := snapshotStore(t, emb)
	search := func(s *redisstore.Store) []string {
		t.Helper()
		res, err := s.Search(ctx, store.Namespace{"docs"}, store.SearchOptions{Query: "text 4", Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, it := range res {
			keys = append(keys, it.Key)
		}
		return keys
	}
	search(open()) // loads every code, stores the snapshot
	base := "{" + p + "}:"
	gen, err := rdb.HGet(ctx, base+"ix", "sgen").Int64()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := rdb.LRange(ctx, base+"ixs", 0, -1).Result()
	if err != nil || len(raw) == 0 {
		t.Fatalf("no snapshot stored: %d parts, %v", len(raw), err)
	}
	parts := make([][]byte, len(raw))
	for i, s := range raw {
		parts[i] = []byte(s)
	}
	v := emb.vec("text 4")
	neg := make([]float32, len(v))
	for i, x := range v {
		neg[i] = -x
	}
	k := store.RowKey{NS: "docs", Key: "k004"}
	forged, err := vecindex.RewriteSnapshot(parts, dims, gen, []store.RowKey{k}, map[store.RowKey][]byte{k: vecindex.EncodeCode(neg, nil)})
	if err != nil {
		t.Fatal(err)
	}
	args := make([]any, len(forged))
	size := 0
	for i, f := range forged {
		args[i] = f
		size += len(f)
	}
	if err := rdb.Del(ctx, base+"ixs").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.RPush(ctx, base+"ixs", args...).Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("snapshot: %d parts; forged: %d parts, %d bytes", len(parts), len(forged), size)

	// As the session 21 test left it: ssize stale, the load refused.
	s := open()
	got := search(s)
	st := engine.IndexStats(s.Engine)
	if !slices.Contains(got, "k004") || st.Snapshots.Load() != 0 || st.FullLoads.Load() != 1 {
		t.Fatalf("ssize stale: got %v, %d snapshot loads, %d full loads; want k004 found by a full load (1) and no snapshot load",
			got, st.Snapshots.Load(), st.FullLoads.Load())
	}

	// ssize made the forged snapshot's: loaded, and k004 missed.
	if err := rdb.HSet(ctx, base+"ix", "ssize", size).Err(); err != nil {
		t.Fatal(err)
	}
	s = open()
	got = search(s)
	st = engine.IndexStats(s.Engine)
	if st.Snapshots.Load() != 1 || st.FullLoads.Load() != 0 {
		t.Fatalf("ssize set to the forged size: %d snapshot loads, %d full loads; want the forged snapshot loaded (1, 0)",
			st.Snapshots.Load(), st.FullLoads.Load())
	}
	t.Logf("ssize set to the forged size: the forged snapshot is loaded (%d code rows read, %d refined from whole codes); a search with k004's own text returns %v",
		st.CodeRows.Load(), st.Refined.Load(), got)
}
