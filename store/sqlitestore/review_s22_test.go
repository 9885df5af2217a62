package sqlitestore

import (
	"strings"
	"testing"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/vecindex"
)

// TestReviewS22ForgedCodeMissedOnSQLite (session 22 review): the limit
// README documents ("a writer of the database that replaces an item's
// code in the snapshot with another well-formed one and writes its
// checksum too … that item may then be missed"), shown: item 42's code in
// the snapshot replaced by its negated vector's (RewriteSnapshot seals
// the parts), a store opened after loads the forged snapshot and a search
// with item 42's own vector does not return it (score 1 expected). Redis's
// twin passes for reasons that are not a check of codes: see redisstore's
// TestReviewS22WhyRedisForgedCodeWasRefused. Passes on main; it fails the
// day forged codes are detected (then update README).
func TestReviewS22ForgedCodeMissedOnSQLite(t *testing.T) {
	f := newSnapFixture(t)
	v := f.emb.Item(42)
	neg := make([]float32, len(v))
	for i, x := range v {
		neg[i] = -x
	}
	k := store.RowKey{NS: snapNS(42).String(), Key: "42"}
	f.forgeSnapshot([]store.RowKey{k}, map[store.RowKey][]byte{k: vecindex.EncodeCode(neg, nil)})
	fresh := f.open()
	got := results(t, fresh, nil, store.SearchOptions{Query: "v42", Limit: 3})
	if fresh.cache.Stats.Snapshots.Load() != 1 {
		t.Fatalf("the forged snapshot was not loaded: %d snapshot loads, %d full loads", fresh.cache.Stats.Snapshots.Load(), fresh.cache.Stats.FullLoads.Load())
	}
	if strings.Contains(got, "n.2/42=") {
		t.Fatalf("item 42 found despite its forged code (%s): forged codes are detected now; update README", got)
	}
	t.Logf("a search with item 42's own vector returned %s", got)
}
