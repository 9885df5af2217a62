package redisstore_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/backends/redis/redisstore"
	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/engine"
	"github.com/memvault/memvault/store/vecindex"
)

// denseEmbedder embeds a text as a dense pseudo-random vector seeded by
// the text, near one of 16 cluster centres the text's hash picks: the
// structure real models' vectors have, which the code index is made for.
type denseEmbedder struct{ dims int }

func (e denseEmbedder) vec(text string) []float32 {
	h := fnv.New64a()
	h.Write([]byte(text))
	sum := h.Sum64()
	centre := rand.New(rand.NewPCG(sum%16, 1))
	r := rand.New(rand.NewPCG(sum, 7))
	v := make([]float32, e.dims)
	for i := range v {
		v[i] = float32(centre.NormFloat64() + 0.5*r.NormFloat64())
	}
	return v
}

func (e denseEmbedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = e.vec(t)
	}
	return out, nil
}
func (e denseEmbedder) EmbedQuery(_ context.Context, t string) ([]float32, error) {
	return e.vec(t), nil
}
func (e denseEmbedder) Dims() int    { return e.dims }
func (e denseEmbedder) Name() string { return fmt.Sprintf("dense:%d", e.dims) }

// TestCodeIndexRanksAsExactScan: on Redis 7 and on Redis 8 without vector
// sets, with the float copy off, searches over 1 500 dense vectors (codes
// centred once 1 024 items have them) rank by the code index and rescore
// a few items exactly, returning what an exact scan returns; another
// store on the same prefix (another process) loads the codes, then
// follows this one's puts and deletes through the log; a process opened
// later loads the snapshot.
func TestCodeIndexRanksAsExactScan(t *testing.T) {
	for _, v := range redistest.Versions {
		t.Run(fmt.Sprintf("redis%d", v), func(t *testing.T) {
			srv := redistest.Shared(t, v)
			testCodeIndex(t, srv.Client(t), nil, store.Namespace{"docs"}, false)
		})
	}
}

// TestCodeIndexAcrossSubjects: with per-subject keys on Redis 8, a search
// of one subject ranks through the vector set, and one across subjects
// (several vector spaces, which one vector set query cannot rank) ranks
// by the code index as an exact scan would; likewise on Redis 7.
func TestCodeIndexAcrossSubjects(t *testing.T) {
	for _, v := range redistest.Versions {
		t.Run(fmt.Sprintf("redis%d", v), func(t *testing.T) {
			srv := redistest.Shared(t, v)
			testCodeIndex(t, srv.Client(t), testkeys.Subjects(t), store.Namespace{"users"}, true)
		})
	}
}

// testCodeIndex runs the checks of TestCodeIndexRanksAsExactScan on the
// items of prefix (of 4 subjects under it, with sd keeping per-subject
// keys), the writer ranking through vector sets where the server has
// them when vsets.
func testCodeIndex(t *testing.T, rdb redis.UniversalClient, sd serde.Serializer, prefix store.Namespace, vsets bool) {
	minCodes := vecindex.SnapshotMinCodes
	vecindex.SnapshotMinCodes = 256 // the store is smaller than a snapshot is worth
	t.Cleanup(func() { vecindex.SnapshotMinCodes = minCodes })
	ctx := context.Background()
	idx := &store.IndexConfig{Embedder: denseEmbedder{256}, Fields: []string{"text"}}
	p := redistest.Prefix()
	open := func(bytes int64, vsets bool) *redisstore.Store {
		s, err := redisstore.NewNoFloatCopy(ctx, rdb, redisstore.Options{Prefix: p, Index: idx, Serde: sd, VectorIndexBytes: bytes, NoVectorSets: !vsets})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	// Items go to prefix itself, or to one of 4 subjects under it.
	nsOf := func(i int) store.Namespace {
		if sd == nil {
			return prefix
		}
		return append(slices.Clone(prefix), fmt.Sprintf("u%d", i%4))
	}
	put := func(s *redisstore.Store, from, to int) {
		t.Helper()
		var ops []store.Op
		for i := from; i < to; i++ {
			ops = append(ops, store.PutOp{Namespace: nsOf(i), Key: fmt.Sprintf("k%04d", i), Value: map[string]any{"text": fmt.Sprintf("text %d", i)}})
		}
		for len(ops) > 0 {
			n := min(len(ops), 250)
			if _, err := s.Batch(ctx, ops[:n]); err != nil {
				t.Fatal(err)
			}
			ops = ops[n:]
		}
	}
	a := open(0, vsets)
	put(a, 0, 1500)
	exact := open(-1, false)
	keys := func(r []store.SearchItem) []string {
		var k []string
		for _, it := range r {
			k = append(k, it.Namespace.String()+"/"+it.Key)
		}
		return k
	}
	check := func(s *redisstore.Store, who string) {
		t.Helper()
		for q := range 5 {
			query := fmt.Sprintf("query %d", q)
			want, err := exact.Search(ctx, prefix, store.SearchOptions{Query: query, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			if len(want) != 10 {
				t.Fatalf("the exact scan found %d items", len(want))
			}
			got, err := s.Search(ctx, prefix, store.SearchOptions{Query: query, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(keys(got), keys(want)) {
				t.Fatalf("%s: %q ranked %v, the exact scan %v", who, query, keys(got), keys(want))
			}
		}
	}
	check(a, "writer")
	st := engine.IndexStats(a.Engine)
	if st.Rescored.Load() == 0 || st.Rescored.Load() > 5*500 || st.Abandoned.Load() != 0 {
		t.Fatalf("writer's index: rescored %d items in 5 searches, abandoned %d; want it to rank", st.Rescored.Load(), st.Abandoned.Load())
	}
	if vsets && a.VectorSets() {
		// A search of one subject's items ranks through the vector set.
		before := st.Rescored.Load()
		if _, err := a.Search(ctx, nsOf(1), store.SearchOptions{Query: "query 1", Limit: 10}); err != nil {
			t.Fatal(err)
		}
		if st.Rescored.Load() != before || engine.ExactSearches(a.Engine) != 0 {
			t.Fatalf("a search of one subject: the code index rescored %d items, %d exact searches; want the vector set", st.Rescored.Load()-before, engine.ExactSearches(a.Engine))
		}
	}
	if c, err := rdb.HGet(ctx, "{"+p+"}:ix", "centre").Bytes(); err != nil || len(c) != 4*256 {
		t.Fatalf("no centre stored after 1 500 coded items (%d bytes, %v)", len(c), err)
	}

	b := open(0, false)
	check(b, "other process")
	put(a, 1500, 1510)
	if err := a.Delete(ctx, nsOf(3), "k0003"); err != nil {
		t.Fatal(err)
	}
	check(b, "other process after puts and a delete")
	if engine.IndexStats(b.Engine).Incremental.Load() == 0 {
		t.Fatal("the other process reloaded instead of reading the log")
	}
	check(a, "writer after its writes")

	// The delete dropped the snapshot (it names the item): a process
	// opened now reads every code and stores a new one, which the next
	// process loads.
	c := open(0, false)
	check(c, "a process opened after the delete")
	put(c, 1510, 1511) // the write after a full load stores the snapshot
	d := open(0, false)
	check(d, "a process opened after a snapshot")
	if engine.IndexStats(d.Engine).Snapshots.Load() == 0 {
		t.Fatal("the new process did not load the snapshot")
	}
}

// TestCodesForOlderRows: rows an older build wrote (no codes, no index
// state) and rows a store without an index wrote (no codes: the
// generation moves past the codes') are coded when a store with an index
// opens, whose searches then rank by the code index as an exact scan
// would.
func TestCodesForOlderRows(t *testing.T) {
	for _, v := range redistest.Versions {
		t.Run(fmt.Sprintf("redis%d", v), func(t *testing.T) {
			ctx := context.Background()
			rdb := redistest.Shared(t, v).Client(t)
			p := redistest.Prefix()
			idx := &store.IndexConfig{Embedder: denseEmbedder{64}, Fields: []string{"text"}}
			open := func(idx *store.IndexConfig, bytes int64) *redisstore.Store {
				s, err := redisstore.NewNoFloatCopy(ctx, rdb, redisstore.Options{Prefix: p, Index: idx, VectorIndexBytes: bytes, NoVectorSets: true})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = s.Close() })
				return s
			}
			ns := store.Namespace{"docs"}
			put := func(s *redisstore.Store, from, to int) {
				t.Helper()
				for i := from; i < to; i++ {
					if err := s.Put(ctx, ns, fmt.Sprintf("k%03d", i), map[string]any{"text": fmt.Sprintf("text %d", i)}); err != nil {
						t.Fatal(err)
					}
				}
			}
			put(open(idx, 0), 0, 100)
			// What an older build leaves: no codes, no index state.
			ids, err := rdb.ZRange(ctx, "{"+p+"}:k", 0, -1).Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				rdb.HDel(ctx, "{"+p+"}:r:"+id, "q", "f", "h")
			}
			rdb.Del(ctx, "{"+p+"}:ix", "{"+p+"}:ixl", "{"+p+"}:ixs")

			check := func(who string) {
				t.Helper()
				s := open(idx, 0)
				exact := open(idx, -1)
				for q := range 3 {
					query := fmt.Sprintf("query %d", q)
					want, err := exact.Search(ctx, ns, store.SearchOptions{Query: query, Limit: 5})
					if err != nil {
						t.Fatal(err)
					}
					got, err := s.Search(ctx, ns, store.SearchOptions{Query: query, Limit: 5})
					if err != nil {
						t.Fatal(err)
					}
					if len(want) != 5 || !slices.EqualFunc(got, want, func(a, b store.SearchItem) bool { return a.Key == b.Key }) {
						t.Fatalf("%s: %q ranked %v, the exact scan %v", who, query, got, want)
					}
				}
				st := engine.IndexStats(s.Engine)
				if st.Rescored.Load() == 0 || st.Abandoned.Load() != 0 {
					t.Fatalf("%s: rescored %d, abandoned %d: the index did not rank", who, st.Rescored.Load(), st.Abandoned.Load())
				}
			}
			check("rows of an older build")
			// A store without an index writes (the vectors stay, its
			// puts have none): the codes fall behind until a store with
			// an index opens.
			plain := open(nil, 0)
			if err := plain.Delete(ctx, ns, "k005"); err != nil {
				t.Fatal(err)
			}
			put(open(idx, 0), 100, 110)
			check("after a store without index wrote")
		})
	}
}
