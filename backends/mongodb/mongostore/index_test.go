package mongostore_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/memvault/memvault/backends/mongodb/mongostore"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/engine"
	"github.com/memvault/memvault/store/vecindex"
)

// denseEmbedder embeds a text as a dense pseudo-random vector seeded by
// the text, near one of 16 cluster centres the text's hash picks: the
// structure real models' vectors have, which the code index is made for
// (uniformly random vectors have no near neighbours to find).
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

// TestCodeIndexRanksAsExactScan: with the float copy off, searches over
// 1 500 dense vectors (codes centred once 1 024 items have them) rank
// by the code index and rescore a few items exactly, returning what an
// exact scan returns; another store on the same collections (another
// process) loads the codes, then follows this one's puts and deletes
// through the log; a process opened later loads the snapshot.
func TestCodeIndexRanksAsExactScan(t *testing.T) {
	mongostore.NoFloatCopy(t)
	minCodes := vecindex.SnapshotMinCodes
	vecindex.SnapshotMinCodes = 256 // the store is smaller than a snapshot is worth
	t.Cleanup(func() { vecindex.SnapshotMinCodes = minCodes })
	ctx := context.Background()
	db := mongotest.Database(t)
	idx := &store.IndexConfig{Embedder: denseEmbedder{256}, Fields: []string{"text"}}
	open := func(bytes int64) *mongostore.Store {
		return newStore(t, db, mongostore.Options{Index: idx, VectorIndexBytes: bytes})
	}
	a := open(0)
	ns := store.Namespace{"docs"}
	put := func(s *mongostore.Store, from, to int) {
		var ops []store.Op
		for i := from; i < to; i++ {
			ops = append(ops, store.PutOp{Namespace: ns, Key: fmt.Sprintf("k%04d", i), Value: map[string]any{"text": fmt.Sprintf("text %d", i)}})
		}
		for len(ops) > 0 {
			n := min(len(ops), 250)
			if _, err := s.Batch(ctx, ops[:n]); err != nil {
				t.Fatal(err)
			}
			ops = ops[n:]
		}
	}
	start := time.Now()
	put(a, 0, 1500)
	t.Logf("1 500 puts: %v", time.Since(start))
	exact := open(-1)
	check := func(s *mongostore.Store, who string) {
		t.Helper()
		for q := range 5 {
			query := fmt.Sprintf("query %d", q)
			want, err := exact.Search(ctx, ns, store.SearchOptions{Query: query, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Search(ctx, ns, store.SearchOptions{Query: query, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			keys := func(r []store.SearchItem) []string {
				var k []string
				for _, it := range r {
					k = append(k, it.Key)
				}
				return k
			}
			if !slices.Equal(keys(got), keys(want)) {
				t.Fatalf("%s: %q ranked %v, the exact scan %v", who, query, keys(got), keys(want))
			}
		}
	}
	start = time.Now()
	check(a, "writer")
	t.Logf("5 searches: %v", time.Since(start))
	st := engine.IndexStats(a.Engine)
	if st.Rescored.Load() == 0 || st.Rescored.Load() > 5*500 || st.Abandoned.Load() != 0 {
		t.Fatalf("writer's index: rescored %d items in 5 searches, abandoned %d; want it to rank", st.Rescored.Load(), st.Abandoned.Load())
	}
	if centred(t, db) == false {
		t.Fatal("no centre stored after 1 500 coded items")
	}

	b := open(0)
	check(b, "other process")
	put(a, 1500, 1510)
	if err := a.Delete(ctx, ns, "k0003"); err != nil {
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
	c := open(0)
	check(c, "a process opened after the delete")
	put(c, 1510, 1511) // the write after a full load stores the snapshot
	d := open(0)
	check(d, "a process opened after a snapshot")
	if engine.IndexStats(d.Engine).Snapshots.Load() == 0 {
		t.Fatal("the new process did not load the snapshot")
	}
}

// centred reports whether the index's state holds a centre.
func centred(t *testing.T, db *mongo.Database) bool {
	t.Helper()
	var st struct {
		Centre []byte `bson:"centre"`
	}
	if err := db.Collection("persistent-store.index").FindOne(context.Background(), map[string]any{"_id": "state"}).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return len(st.Centre) > 0
}
