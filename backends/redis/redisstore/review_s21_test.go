package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/memvault/memvault/backends/redis/redisstore"
	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/vecindex"
	"github.com/redis/go-redis/v9"
)

// TestSearchAfterErasureOnCodeIndex (review, session 21; holds): on Redis 7
// (memvault's code index, codes in the item hashes) two stores on one
// prefix and one key table stand for two processes; the searcher loaded
// the index (snapshot stored) before the other erased carol (keys
// destroyed, her namespace deleted). Its next searches — across subjects,
// in carol's namespace, with carol's item's own text — return none of
// carol's items, no decryption error, and dave's items as before; a put
// of carol's is refused; a store opened after loads no carol item.
func TestSearchAfterErasureOnCodeIndex(t *testing.T) {
	minCodes := vecindex.SnapshotMinCodes
	vecindex.SnapshotMinCodes = 64
	t.Cleanup(func() { vecindex.SnapshotMinCodes = minCodes })
	ctx := context.Background()
	srv := redistest.Shared(t, 7)
	rdb := srv.Client(t)
	h := testkeys.Subjects(t)
	idx := &store.IndexConfig{Embedder: denseEmbedder{64}, Fields: []string{"text"}}
	p := redistest.Prefix()
	open := func() *redisstore.Store {
		s, err := redisstore.NewNoFloatCopy(ctx, rdb, redisstore.Options{Prefix: p, Index: idx, Serde: h})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	a, b := open(), open()
	var ops []store.Op
	for i := range 300 {
		who := []string{"carol", "dave"}[i%2]
		ops = append(ops, store.PutOp{Namespace: store.Namespace{"users", who}, Key: fmt.Sprintf("k%03d", i), Value: map[string]any{"text": fmt.Sprintf("text %d", i)}})
	}
	if _, err := a.Batch(ctx, ops); err != nil {
		t.Fatal(err)
	}
	search := func(s *redisstore.Store, prefix store.Namespace, q string) string {
		t.Helper()
		res, err := s.Search(ctx, prefix, store.SearchOptions{Query: q, Limit: 20})
		if err != nil {
			t.Fatalf("search %v %q: %v", prefix, q, err)
		}
		var out []string
		for _, it := range res {
			out = append(out, it.Namespace.String()+"/"+it.Key)
		}
		return strings.Join(out, " ")
	}
	if got := search(a, store.Namespace{"users"}, "text 4"); !strings.Contains(got, "users.carol/k004") {
		t.Fatalf("control: before the erasure, carol's k004 is not found: %s", got)
	}
	// The other process erases carol.
	if _, err := h.DestroyKeys(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	if err := b.DrainWrites(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.DeletePrefix(ctx, store.Namespace{"users", "carol"}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*redisstore.Store{a, open()} {
		for _, q := range []string{"text 4", "text 10", "text 5"} {
			for _, prefix := range []store.Namespace{nil, {"users"}, {"users", "carol"}} {
				if got := search(s, prefix, q); strings.Contains(got, "carol") {
					t.Fatalf("after carol's erasure a search %v %q returned her items: %s", prefix, q, got)
				}
			}
		}
		if got := search(s, store.Namespace{"users"}, "text 5"); !strings.Contains(got, "users.dave/k005") {
			t.Fatalf("after carol's erasure dave's k005 is not found: %s", got)
		}
	}
	if err := a.Put(ctx, store.Namespace{"users", "carol"}, "again", map[string]any{"text": "text 4"}); !errors.Is(err, keys.ErrSubjectErased) {
		t.Fatalf("a put of erased carol through the searcher = %v, want keys.ErrSubjectErased", err)
	}
}

// TestRedisSnapshotWithWrongCodeNotTrusted (review, session 21): as
// sqlitestore's TestSnapshotWithFlippedCodeNotTrusted on Redis 7: the
// snapshot list {P}:ixs rewritten (well formed, the same keys, the same
// generation) with item k004's code replaced by its negated vector's is
// loaded by a store opened after, whose search with k004's own text then
// misses it, unlike the exact scan.
func TestRedisSnapshotWithWrongCodeNotTrusted(t *testing.T) {
	const dims = 64
	emb := denseEmbedder{dims}
	ctx, rdb, p, open := snapshotStore(t, emb)
	w := open()
	finds := func(s *redisstore.Store, label string) {
		t.Helper()
		res, err := s.Search(ctx, store.Namespace{"docs"}, store.SearchOptions{Query: "text 4", Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, it := range res {
			got = append(got, it.Key)
		}
		if !strings.Contains(strings.Join(got, " "), "k004") {
			t.Fatalf("%s: a search with k004's own text returned %v", label, got)
		}
	}
	finds(w, "the writer") // loads every code, stores the snapshot
	base := "{" + p + "}:"
	n, err := rdb.LLen(ctx, base+"ixs").Result()
	if err != nil || n == 0 {
		t.Fatalf("no snapshot stored: %d parts, %v", n, err)
	}
	gen, err := rdb.HGet(ctx, base+"ix", "sgen").Int64()
	if err != nil {
		t.Fatal(err)
	}
	forge := func(code []byte) {
		t.Helper()
		raw, err := rdb.LRange(ctx, base+"ixs", 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		parts := make([][]byte, len(raw))
		for i, s := range raw {
			parts[i] = []byte(s)
		}
		k := store.RowKey{NS: "docs", Key: "k004"}
		forged, err := vecindex.RewriteSnapshot(parts, dims, gen, []store.RowKey{k}, map[store.RowKey][]byte{k: code})
		if err != nil {
			t.Fatal(err)
		}
		args := make([]any, len(forged))
		for i, f := range forged {
			args[i] = f
		}
		if err := rdb.Del(ctx, base+"ixs").Err(); err != nil {
			t.Fatal(err)
		}
		if err := rdb.RPush(ctx, base+"ixs", args...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	v := emb.vec("text 4")
	forge(vecindex.EncodeCode(v, nil))
	finds(open(), "control: a store opened after the snapshot was rewritten with k004's own code")
	neg := make([]float32, len(v))
	for i, x := range v {
		neg[i] = -x
	}
	forge(vecindex.EncodeCode(neg, nil))
	finds(open(), "a store opened after the snapshot's code of k004 was replaced")
}

// TestRedisIndexStateClaimsSizeAllocation (review, session 21): the
// snapshot's size and the coverage's item count are claims stored in
// {P}:ix (fields ssize and items), and a loading store reserves its index
// from them (vecindex loadSnapshot: min(ssize, budget)/perCode codes,
// capped by items) before it reads a part. With both set to 2^40 on a
// store of 300 items, a store opened after allocates more than twice its
// whole budget (vecindex.DefaultBytes, 256 MiB) on its first search:
// 547 MiB against 0.2 MiB with the true fields (the rules: "no allocation
// sized by a caller's number"; the brief: "no allocation sized by the
// file"). ssize alone is capped by the true item count (holds). Measured
// as bytes allocated by the first search (runtime.MemStats.TotalAlloc).
func TestRedisIndexStateClaimsSizeAllocation(t *testing.T) {
	ctx, rdb, p, open := snapshotStore(t, denseEmbedder{64})
	w := open()
	if _, err := w.Search(ctx, nil, store.SearchOptions{Query: "text 4", Limit: 3}); err != nil {
		t.Fatal(err)
	}
	base := "{" + p + "}:"
	firstSearch := func() uint64 {
		s := open()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if _, err := s.Search(ctx, nil, store.SearchOptions{Query: "text 4", Limit: 3}); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	honest := firstSearch()
	if err := rdb.HSet(ctx, base+"ix", "ssize", int64(1)<<40).Err(); err != nil {
		t.Fatal(err)
	}
	claimed := firstSearch()
	t.Logf("first search allocated %d bytes with the true ssize, %d with ssize = 2^40", honest, claimed)
	// And with the coverage's item count claimed as large too.
	if err := rdb.HSet(ctx, base+"ix", "items", int64(1)<<40).Err(); err != nil {
		t.Fatal(err)
	}
	if c := firstSearch(); c > claimed {
		claimed = c
	}
	t.Logf("with items = 2^40 too: %d", claimed)
	if claimed > 16*honest+(8<<20) {
		t.Fatalf("stored claims ssize = items = 2^40 made a fresh store's first search allocate %.1f MiB (%.1f MiB with the true size) for a store of 300 items",
			float64(claimed)/(1<<20), float64(honest)/(1<<20))
	}
}

// snapshotStore stores 300 items of one namespace ("docs", keys k000…)
// on Redis 7 with a snapshot threshold low enough for them to get one,
// and returns open, which opens another store on them (its own index,
// loaded at its first search).
func snapshotStore(t *testing.T, emb denseEmbedder) (context.Context, *redis.Client, string, func() *redisstore.Store) {
	t.Helper()
	minCodes := vecindex.SnapshotMinCodes
	vecindex.SnapshotMinCodes = 64
	t.Cleanup(func() { vecindex.SnapshotMinCodes = minCodes })
	ctx := context.Background()
	rdb := redistest.Shared(t, 7).Client(t)
	idx := &store.IndexConfig{Embedder: emb, Fields: []string{"text"}}
	p := redistest.Prefix()
	open := func() *redisstore.Store {
		s, err := redisstore.NewNoFloatCopy(ctx, rdb, redisstore.Options{Prefix: p, Index: idx})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	var ops []store.Op
	for i := range 300 {
		ops = append(ops, store.PutOp{Namespace: store.Namespace{"docs"}, Key: fmt.Sprintf("k%03d", i), Value: map[string]any{"text": fmt.Sprintf("text %d", i)}})
	}
	if _, err := open().Batch(ctx, ops); err != nil {
		t.Fatal(err)
	}
	return ctx, rdb, p, open
}
