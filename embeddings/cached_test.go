package embeddings

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// recorder wraps a real embedder and records what reaches it. Queries get
// an instruction prefix, as some models do, so that query and document
// vectors of one text differ.
type recorder struct {
	Embedder
	mu      sync.Mutex
	docs    [][]string
	queries []string
	name    string // overrides Embedder.Name when set
	fail    error
	mangle  func([][]float32) [][]float32
}

func (r *recorder) Name() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.name != "" {
		return r.name
	}
	return r.Embedder.Name()
}

func (r *recorder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	r.mu.Lock()
	r.docs = append(r.docs, slices.Clone(texts))
	fail, mangle := r.fail, r.mangle
	r.mu.Unlock()
	if fail != nil {
		return nil, fail
	}
	v, err := r.Embedder.EmbedDocuments(ctx, texts)
	if mangle != nil {
		v = mangle(v)
	}
	return v, err
}

func (r *recorder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	r.mu.Lock()
	r.queries = append(r.queries, text)
	fail := r.fail
	r.mu.Unlock()
	if fail != nil {
		return nil, fail
	}
	return r.Embedder.EmbedQuery(ctx, "query: "+text)
}

func newCached(t testing.TB, size int) (*Cached, *recorder) {
	t.Helper()
	r := &recorder{Embedder: NewUnkeyedHashing(64)}
	c, err := NewCached(r, size)
	if err != nil {
		t.Fatal(err)
	}
	return c, r
}

func equalVec(a, b []float32) bool { return slices.Equal(a, b) }

func TestCachedBatchesOnlyMissesInOrder(t *testing.T) {
	ctx := context.Background()
	c, r := newCached(t, 100)
	h := NewUnkeyedHashing(64)

	if _, err := c.EmbedDocuments(ctx, []string{"alpha", "beta"}); err != nil {
		t.Fatal(err)
	}
	texts := []string{"gamma", "alpha", "delta", "gamma", "beta", "", "delta", ""}
	got, err := c.EmbedDocuments(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(got), len(texts))
	}
	for i, text := range texts {
		if !equalVec(got[i], h.Embed(text)) {
			t.Errorf("vector %d (%q) is not the vector of its text", i, text)
		}
	}
	wantCalls := [][]string{{"alpha", "beta"}, {"gamma", "delta", ""}}
	if !slices.EqualFunc(r.docs, wantCalls, slices.Equal) {
		t.Errorf("underlying calls %q, want %q", r.docs, wantCalls)
	}
	want := CacheStats{Hits: 2, Misses: 8, Embedded: 5, Len: 5}
	if s := c.Stats(); s != want {
		t.Errorf("Stats %+v, want %+v", s, want)
	}

	// All hits: no call at all.
	if _, err := c.EmbedDocuments(ctx, texts); err != nil {
		t.Fatal(err)
	}
	if len(r.docs) != 2 {
		t.Errorf("all-hit call reached the underlying embedder: %q", r.docs[2:])
	}
	if s := c.Stats(); s.Hits != 2+8 || s.Misses != 8 {
		t.Errorf("Stats after all-hit call %+v", s)
	}
}

func TestCachedReturnsCopies(t *testing.T) {
	ctx := context.Background()
	c, _ := newCached(t, 10)
	want := NewUnkeyedHashing(64).Embed("same text")
	for range 3 {
		vs, err := c.EmbedDocuments(ctx, []string{"same text", "same text"})
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vs {
			if !equalVec(v, want) {
				t.Fatalf("vector %d was modified through an earlier result", i)
			}
			v[0] = 42 // must affect neither the cache nor the other result
		}
		q, err := c.EmbedQuery(ctx, "same text")
		if err != nil {
			t.Fatal(err)
		}
		q[1] = 42
	}
	q1, _ := c.EmbedQuery(ctx, "same text")
	q2, _ := c.EmbedQuery(ctx, "same text")
	if !equalVec(q1, q2) || q1[1] == 42 {
		t.Error("query vectors were modified through an earlier result")
	}
}

func TestCachedQueryAndDocumentKeySpaces(t *testing.T) {
	ctx := context.Background()
	c, r := newCached(t, 10)
	doc, err := c.EmbedDocuments(ctx, []string{"lunch"})
	if err != nil {
		t.Fatal(err)
	}
	q, err := c.EmbedQuery(ctx, "lunch")
	if err != nil {
		t.Fatal(err)
	}
	if equalVec(doc[0], q) {
		t.Fatal("query served the document vector")
	}
	if len(r.queries) != 1 {
		t.Fatalf("EmbedQuery calls %q, want one", r.queries)
	}
	q2, err := c.EmbedQuery(ctx, "lunch")
	if err != nil || !equalVec(q, q2) || len(r.queries) != 1 {
		t.Fatalf("second EmbedQuery: err %v, calls %q", err, r.queries)
	}
	if s := c.Stats(); s != (CacheStats{Hits: 1, Misses: 2, Embedded: 2, Len: 2}) {
		t.Errorf("Stats %+v", s)
	}
}

func TestCachedKeysOnName(t *testing.T) {
	ctx := context.Background()
	c, r := newCached(t, 10)
	if _, err := c.EmbedDocuments(ctx, []string{"x"}); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	r.name = "other-model:64"
	r.mu.Unlock()
	if _, err := c.EmbedDocuments(ctx, []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if len(r.docs) != 2 {
		t.Errorf("a vector cached under another Name was served: calls %q", r.docs)
	}
	if c.Name() != "other-model:64" || c.Dims() != 64 {
		t.Errorf("Name %q Dims %d", c.Name(), c.Dims())
	}
}

func TestCachedEvicts(t *testing.T) {
	ctx := context.Background()
	c, r := newCached(t, 2)
	for _, text := range []string{"a", "b", "c", "a"} {
		if _, err := c.EmbedDocuments(ctx, []string{text}); err != nil {
			t.Fatal(err)
		}
	}
	// "a" was evicted by "c" and embedded again.
	if s := c.Stats(); s != (CacheStats{Misses: 4, Embedded: 4, Evictions: 2, Len: 2}) {
		t.Errorf("Stats %+v", s)
	}
	if len(r.docs) != 4 {
		t.Errorf("calls %q", r.docs)
	}
	c.Purge()
	if s := c.Stats(); s.Len != 0 || s.Misses != 4 {
		t.Errorf("after Purge: %+v", s)
	}
}

func TestCachedErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := NewCached(NewUnkeyedHashing(8), 0); !errors.Is(err, ErrInvalidCacheSize) {
		t.Errorf("NewCached(size 0): %v", err)
	}

	c, r := newCached(t, 10)
	boom := errors.New("model offline")
	r.fail = boom
	if _, err := c.EmbedDocuments(ctx, []string{"a"}); !errors.Is(err, boom) {
		t.Errorf("EmbedDocuments: %v, want %v", err, boom)
	}
	if _, err := c.EmbedQuery(ctx, "a"); !errors.Is(err, boom) {
		t.Errorf("EmbedQuery: %v, want %v", err, boom)
	}
	if c.Stats().Len != 0 {
		t.Error("a failed call left entries in the cache")
	}
	r.fail = nil

	r.mangle = func(v [][]float32) [][]float32 { return v[:len(v)-1] }
	if _, err := c.EmbedDocuments(ctx, []string{"a", "b"}); !errors.Is(err, ErrCountMismatch) {
		t.Errorf("short result: %v", err)
	}
	r.mangle = func(v [][]float32) [][]float32 { v[1] = v[1][:3]; return v }
	if _, err := c.EmbedDocuments(ctx, []string{"a", "b"}); !errors.Is(err, ErrDimensionMismatch) || !strings.Contains(err.Error(), "text 1") {
		t.Errorf("short vector: %v", err)
	}
	if c.Stats().Len != 0 {
		t.Error("a rejected result left entries in the cache")
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.EmbedDocuments(cctx, []string{"a"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled EmbedDocuments: %v", err)
	}
	if _, err := c.EmbedQuery(cctx, "a"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled EmbedQuery: %v", err)
	}
}

func TestCachedConcurrent(t *testing.T) {
	ctx := context.Background()
	c, _ := newCached(t, 16)
	h := NewUnkeyedHashing(64)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				text := fmt.Sprint("text ", (g+i)%24)
				vs, err := c.EmbedDocuments(ctx, []string{text, "shared"})
				if err != nil {
					t.Error(err)
					return
				}
				if !equalVec(vs[0], h.Embed(text)) || !equalVec(vs[1], h.Embed("shared")) {
					t.Error("wrong vector under concurrency")
					return
				}
				vs[0][0] = -1
			}
		})
	}
	wg.Wait()
	s := c.Stats()
	if s.Hits+s.Misses != 8*200*2 {
		t.Errorf("Stats %+v do not add up to %d lookups", s, 8*200*2)
	}
}
