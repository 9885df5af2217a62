package memstore_test

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/engine"
	"github.com/memvault/memvault/store/memstore"
	"github.com/memvault/memvault/store/storetest"
)

// TestSearchUsesCodeIndex: a memory store asked for a code index ranks a
// query by it (package vecindex): it loads the codes once, rescores only
// some items exactly, keeps itself current through later writes and
// sweeps without reloading, and returns the exact ranking. Before, the memory store
// scored every vector and had no index.
func TestSearchUsesCodeIndex(t *testing.T) {
	ctx := context.Background()
	emb := nearEmbedder{vecEmbedder{256}}
	clock := storetest.NewClock()
	s, err := memstore.New(memstore.Options{Index: &store.IndexConfig{Embedder: emb, Fields: []string{"text"}}, VectorIndexBytes: 1 << 20,
		TTL: &store.TTLConfig{SweepInterval: -1}, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ops []store.Op
	for i := range 2000 {
		ops = append(ops, store.PutOp{Namespace: store.Namespace{"docs", fmt.Sprint(i % 4)}, Key: fmt.Sprint(i),
			Value: map[string]any{"text": text(i)}})
	}
	if _, err := s.Batch(ctx, ops); err != nil {
		t.Fatal(err)
	}
	stats := engine.IndexStats(s.Engine)
	if stats == nil {
		t.Fatal("no code index")
	}
	// The exact ranking, by cosine of every item's one vector.
	q := emb.vec("a query")
	exact := func() []string {
		type scored struct {
			key   string
			score float64
		}
		var all []scored
		for i := range 2001 {
			t := text(i)
			if i == 2000 {
				t = "a query"
			}
			all = append(all, scored{fmt.Sprint(i), cosine(q, emb.vec(t))})
		}
		slices.SortFunc(all, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
		var keys []string
		for _, s := range all[:10] {
			keys = append(keys, s.key)
		}
		return keys
	}
	search := func() []string {
		res, err := s.Search(ctx, store.Namespace{"docs"}, store.SearchOptions{Query: "a query", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, it := range res {
			keys = append(keys, it.Key)
		}
		return keys
	}
	// The item 2000 holds the query's own text: it ranks first once put.
	if err := s.Put(ctx, store.Namespace{"docs", "x"}, "2000", map[string]any{"text": "a query"}); err != nil {
		t.Fatal(err)
	}
	want := exact()
	if got := search(); !slices.Equal(got, want) {
		t.Fatalf("search = %v, want %v", got, want)
	}
	loads, rescored := stats.FullLoads.Load(), stats.Rescored.Load()
	if loads != 1 || rescored == 0 || rescored >= 2001 || stats.Abandoned.Load() != 0 {
		t.Fatalf("index: %d full loads, %d items rescored, %d abandoned; want 1 load and fewer rescored than items", loads, rescored, stats.Abandoned.Load())
	}
	// A later write reaches the index at commit: no reload.
	if err := s.Delete(ctx, store.Namespace{"docs", "x"}, "2000"); err != nil {
		t.Fatal(err)
	}
	if got := search(); got[0] == "2000" || stats.FullLoads.Load() != 1 {
		t.Fatalf("after delete: search = %v, %d full loads", got, stats.FullLoads.Load())
	}
	// A sweep hands the items it deleted to the index: no reload either.
	if err := s.Put(ctx, store.Namespace{"docs", "x"}, "2000", map[string]any{"text": "a query"}, store.WithTTL(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := search(); got[0] != "2000" {
		t.Fatalf("search = %v, want 2000 first", got)
	}
	clock.Advance(2 * time.Minute)
	if n, err := s.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v", n, err)
	}
	if got := search(); got[0] == "2000" || stats.FullLoads.Load() != 1 {
		t.Fatalf("after sweep: search = %v, %d full loads (want 1)", got, stats.FullLoads.Load())
	}
}

// text is item i's text: every 100th near the query, so that the best
// items stand out as real embeddings' do, the others random.
func text(i int) string {
	if i%100 == 0 {
		return fmt.Sprintf("near %d", i)
	}
	return fmt.Sprintf("document %d", i)
}

// nearEmbedder embeds "near ..." texts close to the query "a query".
type nearEmbedder struct{ vecEmbedder }

func (e nearEmbedder) vec(text string) []float32 {
	v := e.vecEmbedder.vec(text)
	if strings.HasPrefix(text, "near ") {
		q := e.vecEmbedder.vec("a query")
		for i := range v {
			v[i] = q[i] + 0.3*v[i]
		}
	}
	return v
}

func (e nearEmbedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = e.vec(t)
	}
	return out, nil
}

func (e nearEmbedder) EmbedQuery(_ context.Context, text string) ([]float32, error) {
	return e.vec(text), nil
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}
