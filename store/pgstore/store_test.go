package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/store/internal/filtering"
	"github.com/memvault/memvault/store/internal/indexing"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/pgstore"
	"github.com/memvault/memvault/store/storetest"
)

// TestScoresPerDistance: scores match values computed by hand for
// q = [1 2 2] and d = [2 1 2] (|q| = |d| = 3, q·d = 8, q-d = [-1 1 0]),
// through the index and through the exact fallback.
func TestScoresPerDistance(t *testing.T) {
	emb := &tableEmbedder{dims: 3, vectors: map[string][]float32{
		"q": {1, 2, 2}, "d": {2, 1, 2}, "far": {-1, 0, 0},
	}}
	for _, tc := range []struct {
		dist      store.Distance
		want, far float64
	}{
		{store.Cosine, 8.0 / 9, -1.0 / 3},          // q·d / (|q||d|)
		{store.L2, -math.Sqrt2, -2 * math.Sqrt(3)}, // -|q-d|; q-far = [2 2 2]
		{store.InnerProduct, 8, -1},                // q·d
	} {
		for _, kind := range []pgstore.ANNKind{pgstore.HNSW, pgstore.Flat} {
			t.Run(fmt.Sprintf("%s/%s", tc.dist, kind), func(t *testing.T) {
				ctx := context.Background()
				s, _ := open(t, pgstore.Options{Index: &store.IndexConfig{
					Embedder: emb, Distance: tc.dist, Fields: []string{"t"},
				}, ANN: pgstore.ANNConfig{Kind: kind}})
				ns := store.Namespace{"n"}
				must(t, s.Put(ctx, ns, "d", map[string]any{"t": "d"}))
				must(t, s.Put(ctx, ns, "far", map[string]any{"t": "far"}))
				items, err := s.Search(ctx, ns, store.SearchOptions{Query: "q"})
				must(t, err)
				if got := keysOf(items); !slices.Equal(got, []string{"n/d", "n/far"}) {
					t.Fatalf("order %q", got)
				}
				for i, want := range []float64{tc.want, tc.far} {
					if got := *items[i].Score; math.Abs(got-want) > 1e-6 {
						t.Errorf("%s score = %v, want %v", items[i].Key, got, want)
					}
					v, _ := emb.EmbedQuery(ctx, items[i].Key)
					q, _ := emb.EmbedQuery(ctx, "q")
					if ref := indexing.Score(tc.dist, v, q); math.Abs(ref-want) > 1e-6 {
						t.Errorf("indexing.Score(%s) = %v, want %v", items[i].Key, ref, want)
					}
				}
			})
		}
	}
}

// TestReputDropsStaleVectors: a re-put keeps only the vectors of the fields
// it embeds; WithoutIndex drops them all (LangGraph keeps them, stale).
func TestReputDropsStaleVectors(t *testing.T) {
	ctx := context.Background()
	s, pool := open(t, pgstore.Options{Index: &store.IndexConfig{
		Embedder: embeddings.NewUnkeyedHashing(16), Fields: []string{"a", "b", "tags[*]"},
	}})
	ns := store.Namespace{"u"}
	fields := func() []string {
		rows, err := pool.Query(ctx, `SELECT field_name FROM store_vectors WHERE prefix = 'u' AND key = 'k' ORDER BY 1`)
		must(t, err)
		defer rows.Close()
		out := []string{}
		for rows.Next() {
			var f string
			must(t, rows.Scan(&f))
			out = append(out, f)
		}
		return out
	}
	must(t, s.Put(ctx, ns, "k", map[string]any{"a": "x", "b": "y", "tags": []any{"t1", "t2", "t3"}}))
	if got := fields(); !slices.Equal(got, []string{"a", "b", "tags[*].0", "tags[*].1", "tags[*].2"}) {
		t.Fatalf("fields %q", got)
	}
	must(t, s.Put(ctx, ns, "k", map[string]any{"a": "x2", "tags": []any{"t1"}}))
	if got := fields(); !slices.Equal(got, []string{"a", "tags[*]"}) {
		t.Fatalf("after re-put: fields %q", got)
	}
	must(t, s.Put(ctx, ns, "k", map[string]any{"a": "x3"}, store.WithIndex("b")))
	if got := fields(); len(got) != 0 {
		t.Fatalf("after WithIndex(b) on a value without b: fields %q", got)
	}
	must(t, s.Put(ctx, ns, "k", map[string]any{"a": "x", "b": "y"}))
	must(t, s.Put(ctx, ns, "k", map[string]any{"a": "x", "b": "y"}, store.WithoutIndex()))
	if got := fields(); len(got) != 0 {
		t.Fatalf("after WithoutIndex: fields %q", got)
	}
	must(t, s.Put(ctx, ns, "k", map[string]any{"a": "x", "b": "y"}))
	must(t, s.Delete(ctx, ns, "k"))
	if n := count(t, pool, `SELECT count(*) FROM store_vectors`); n != 0 {
		t.Fatalf("%d vectors left after Delete", n)
	}
}

// TestBatchEmbedsOnce: the texts of all the puts of a batch go to the
// embedder in one call.
func TestBatchEmbedsOnce(t *testing.T) {
	ctx := context.Background()
	emb := &countingEmbedder{Embedder: embeddings.NewUnkeyedHashing(16)}
	s, pool := open(t, pgstore.Options{Index: &store.IndexConfig{Embedder: emb, Fields: []string{"a", "b"}}})
	var ops []store.Op
	for i := range 50 {
		ops = append(ops, store.PutOp{Namespace: store.Namespace{"u"}, Key: fmt.Sprint(i), Value: map[string]any{"a": "x", "b": fmt.Sprint(i)}})
	}
	_, err := s.Batch(ctx, ops)
	must(t, err)
	if emb.calls != 1 || emb.texts != 100 {
		t.Fatalf("%d EmbedDocuments calls for %d texts, want 1 for 100", emb.calls, emb.texts)
	}
	if n := count(t, pool, `SELECT count(*) FROM store_vectors`); n != 100 {
		t.Fatalf("%d vectors", n)
	}
}

type countingEmbedder struct {
	embeddings.Embedder
	calls, texts int
}

func (e *countingEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	e.calls++
	e.texts += len(texts)
	return e.Embedder.EmbedDocuments(ctx, texts)
}

// TestEncryptedAtRest: values are stored as envelopes that neither reveal
// the plaintext nor decrypt anywhere but at their own namespace and key.
func TestEncryptedAtRest(t *testing.T) {
	ctx := context.Background()
	s, pool := open(t, pgstore.Options{Serde: newSealed(t), CacheSize: -1})
	secret := map[string]any{"diagnosis": "hypertension", "n": 3}
	must(t, s.Put(ctx, store.Namespace{"patients", "p1"}, "chart", secret))
	must(t, s.Put(ctx, store.Namespace{"patients", "p1"}, "other", map[string]any{"x": 1}))
	must(t, s.Put(ctx, store.Namespace{"patients", "p2"}, "chart", map[string]any{"x": 2}))

	var raw string
	must(t, pool.QueryRow(ctx, `SELECT value::text FROM store WHERE prefix = 'patients.p1' AND key = 'chart'`).Scan(&raw))
	if strings.Contains(raw, "hypertension") || strings.Contains(raw, "diagnosis") || !strings.Contains(raw, `"__memvault_enc__": 1`) {
		t.Fatalf("stored value %s", raw)
	}
	it, err := s.Get(ctx, store.Namespace{"patients", "p1"}, "chart")
	must(t, err)
	if !filtering.JSONEqual(it.Value, secret) {
		t.Fatalf("Get = %v", it.Value)
	}

	// The ciphertext copied onto another key, or another namespace, fails.
	for _, dst := range []struct{ prefix, key string }{{"patients.p1", "other"}, {"patients.p2", "chart"}} {
		_, err := pool.Exec(ctx, `UPDATE store SET value = (SELECT value FROM store WHERE prefix = 'patients.p1' AND key = 'chart')
WHERE prefix = $1 AND key = $2`, dst.prefix, dst.key)
		must(t, err)
		_, err = s.Get(ctx, store.ParseNamespace(dst.prefix), dst.key)
		if !errors.Is(err, serde.ErrDecrypt) {
			t.Errorf("copied to %s/%s: Get error %v, want serde.ErrDecrypt", dst.prefix, dst.key, err)
		}
		_, err = s.Search(ctx, store.ParseNamespace(dst.prefix), store.SearchOptions{})
		if !errors.Is(err, serde.ErrDecrypt) {
			t.Errorf("copied to %s/%s: Search error %v, want serde.ErrDecrypt", dst.prefix, dst.key, err)
		}
	}

	// A plaintext row is refused by the strict serializer.
	_, err = pool.Exec(ctx, `INSERT INTO store (prefix, key, value) VALUES ('patients.p3', 'plain', '{"a": 1}')`)
	must(t, err)
	if _, err := s.Get(ctx, store.Namespace{"patients", "p3"}, "plain"); !errors.Is(err, serde.ErrPlaintextRefused) {
		t.Errorf("plaintext row: error %v, want serde.ErrPlaintextRefused", err)
	}

	// A store without the serializer cannot read the envelopes.
	plain, err := pgstore.New(pool, pgstore.Options{})
	must(t, err)
	defer plain.Close()
	if _, err := plain.Get(ctx, store.Namespace{"patients", "p1"}, "chart"); !errors.Is(err, pgstore.ErrEnvelope) {
		t.Errorf("no serializer: error %v, want ErrEnvelope", err)
	}
}

// TestEncryptedFilterPaging: with encryption, filters run after decryption
// and every page is exactly the page a plaintext store returns, with or
// without a query. (A flat index makes both exact: two HNSW graphs may
// differ in which of many tied items they find.)
func TestEncryptedFilterPaging(t *testing.T) {
	ctx := context.Background()
	idx := func() *store.IndexConfig {
		return &store.IndexConfig{Embedder: storetest.NewAxisEmbedder(storetest.Vocabulary...), Fields: []string{"text"}}
	}
	flat := pgstore.ANNConfig{Kind: pgstore.Flat}
	clock := storetest.NewClock()
	plain, _ := open(t, pgstore.Options{Index: idx(), ANN: flat, Now: clock.Now})
	enc, _ := open(t, pgstore.Options{Index: idx(), ANN: flat, Now: clock.Now, Serde: newSealed(t)})
	words := storetest.Vocabulary
	for i := range 300 {
		v := map[string]any{"n": i, "parity": []string{"even", "odd"}[i%2], "text": words[i%4] + " " + words[(i/4)%4]}
		if i%7 == 0 {
			delete(v, "text") // no vectors
		}
		ns := store.Namespace{"u", fmt.Sprint(i % 3)}
		must(t, plain.Put(ctx, ns, fmt.Sprint(i), v))
		must(t, enc.Put(ctx, ns, fmt.Sprint(i), v))
		clock.Advance(time.Millisecond)
	}
	filters := []map[string]any{
		{"parity": "odd"},
		{"n": map[string]any{"$gte": 100, "$lt": 250}, "parity": map[string]any{"$ne": "odd"}},
		{"n": map[string]any{"$gt": 295}},
	}
	for fi, f := range filters {
		for _, query := range []string{"", "apple cherry"} {
			for _, prefix := range []store.Namespace{{"u"}, {"u", "1"}} {
				for _, page := range []struct{ limit, offset int }{{10, 0}, {10, 40}, {25, 90}, {100, 0}, {7, 140}} {
					opt := store.SearchOptions{Query: query, Filter: f, Limit: page.limit, Offset: page.offset}
					want, err := plain.Search(ctx, prefix, opt)
					must(t, err)
					got, err := enc.Search(ctx, prefix, opt)
					must(t, err)
					if !slices.Equal(keysOf(got), keysOf(want)) {
						t.Fatalf("filter %d query %q prefix %v page %+v:\n got %q\nwant %q", fi, query, prefix, page, keysOf(got), keysOf(want))
					}
				}
			}
		}
	}
}

// TestFilterKeysAreParameters: SQL metacharacters in filter keys and
// values are data, never SQL.
func TestFilterKeysAreParameters(t *testing.T) {
	ctx := context.Background()
	s, pool := open(t, pgstore.Options{})
	evil := []string{`a'b`, `x'); DROP TABLE store; --`, `"q"`, `\`, `$1`, `%_`, `a.b`, `ü 😀`}
	for i, k := range evil {
		must(t, s.Put(ctx, store.Namespace{"u"}, fmt.Sprint(i), map[string]any{k: i, "s": k}))
	}
	for i, k := range evil {
		for _, f := range []map[string]any{
			{k: i},
			{k: map[string]any{"$gte": i, "$lte": i}},
			{"s": k},
			{"s": map[string]any{"$gte": k, "$lte": k}},
		} {
			items, err := s.Search(ctx, nil, store.SearchOptions{Filter: f})
			must(t, err)
			if got := keysOf(items); !slices.Equal(got, []string{fmt.Sprintf("u/%d", i)}) {
				t.Errorf("filter %v: %q", f, got)
			}
		}
	}
	if n := count(t, pool, `SELECT count(*) FROM store`); n != len(evil) {
		t.Fatalf("%d rows", n)
	}
}

// TestTTLSweeper: the sweeper goroutine deletes expired items (by the
// store's clock) and stops on Close.
func TestTTLSweeper(t *testing.T) {
	ctx := context.Background()
	clock := storetest.NewClock()
	s, pool := open(t, pgstore.Options{Now: clock.Now, TTL: &store.TTLConfig{SweepInterval: 5 * time.Millisecond}})
	must(t, s.Put(ctx, store.Namespace{"u"}, "short", map[string]any{"a": 1}, store.WithTTL(time.Minute)))
	must(t, s.Put(ctx, store.Namespace{"u"}, "long", map[string]any{"a": 1}, store.WithTTL(time.Hour)))
	must(t, s.Put(ctx, store.Namespace{"u"}, "forever", map[string]any{"a": 1}))
	var ttl int
	must(t, pool.QueryRow(ctx, `SELECT ttl_minutes FROM store WHERE key = 'long'`).Scan(&ttl))
	if ttl != 60 {
		t.Fatalf("ttl_minutes = %d", ttl)
	}
	clock.Advance(2 * time.Minute)
	deadline := time.Now().Add(30 * time.Second)
	for count(t, pool, `SELECT count(*) FROM store WHERE key = 'short'`) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the sweeper did not delete the expired item")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n := count(t, pool, `SELECT count(*) FROM store`); n != 2 {
		t.Fatalf("%d items left, want 2", n)
	}
	must(t, s.Close())
	if _, err := s.Sweep(ctx); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Sweep after Close: %v", err)
	}
	if _, err := s.Get(ctx, store.Namespace{"u"}, "long"); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Get after Close: %v", err)
	}
}

// TestPutTx: a memory written in the caller's transaction commits or rolls
// back with it.
func TestPutTx(t *testing.T) {
	ctx := context.Background()
	s, pool := open(t, pgstore.Options{Index: &store.IndexConfig{Embedder: embeddings.NewUnkeyedHashing(8)}})
	ns := store.Namespace{"u"}
	for _, commit := range []bool{false, true} {
		tx, err := pool.Begin(ctx)
		must(t, err)
		must(t, s.PutTx(ctx, tx, ns, "k", map[string]any{"a": "b"}))
		must(t, s.PutBatchTx(ctx, tx, []store.PutOp{{Namespace: ns, Key: "k2", Value: map[string]any{"c": "d"}}}))
		if commit {
			must(t, tx.Commit(ctx))
		} else {
			must(t, tx.Rollback(ctx))
		}
		n := count(t, pool, `SELECT count(*) FROM store`)
		v := count(t, pool, `SELECT count(*) FROM store_vectors`)
		if commit && (n != 2 || v != 2) || !commit && (n != 0 || v != 0) {
			t.Fatalf("commit=%v: %d items, %d vectors", commit, n, v)
		}
	}
	tx, err := pool.Begin(ctx)
	must(t, err)
	must(t, s.DeleteTx(ctx, tx, ns, "k"))
	must(t, tx.Commit(ctx))
	if it, err := s.Get(ctx, ns, "k"); err != nil || it != nil {
		t.Fatalf("after DeleteTx: %v, %v", it, err)
	}
}

// TestNULValues: JSONB cannot hold U+0000, yet such values round-trip.
func TestNULValues(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t, pgstore.Options{})
	v := map[string]any{"s": "a\x00b", `k\u0000`: `\u0000`}
	must(t, s.Put(ctx, store.Namespace{"u"}, "k", v))
	it, err := s.Get(ctx, store.Namespace{"u"}, "k")
	must(t, err)
	if !filtering.JSONEqual(it.Value, v) {
		t.Fatalf("Get = %q", it.Value)
	}
}

// TestDuplicatesStayOnTheIndex: thirty items with the same text (the
// same memory saved many times) tie at the same distance; a search whose
// page ends inside the tie widens the index-served candidates rather than
// scanning the table, and still returns the exact query's page (ties by
// newest first).
func TestDuplicatesStayOnTheIndex(t *testing.T) {
	ctx := context.Background()
	emb := embeddings.NewUnkeyedHashing(64)
	s, _ := open(t, pgstore.Options{Index: &store.IndexConfig{Dims: 64, Embedder: emb, Fields: []string{"text"}}, ANN: pgstore.ANNConfig{Kind: pgstore.HNSW}})
	words := []string{"invoice", "refund", "flight", "hotel", "password", "coffee", "allergy", "meeting"}
	for i := range 200 {
		text := fmt.Sprintf("%s %s %s %d", words[i%8], words[(i/8)%8], words[(i/64)%8], i)
		must(t, s.Put(ctx, store.Namespace{"users", "u"}, fmt.Sprint("other", i), map[string]any{"text": text}))
	}
	for i := range 30 {
		must(t, s.Put(ctx, store.Namespace{"users", "u"}, fmt.Sprintf("dup%02d", i), map[string]any{"text": "prefers email over phone calls"}))
	}
	res, err := s.Search(ctx, store.Namespace{"users"}, store.SearchOptions{Query: "prefers email over phone calls", Limit: 10})
	must(t, err)
	var got []string
	for _, it := range res {
		got = append(got, it.Key)
	}
	// The 30 duplicates tie; the exact order puts the newest first.
	want := []string{"dup29", "dup28", "dup27", "dup26", "dup25", "dup24", "dup23", "dup22", "dup21", "dup20"}
	if !slices.Equal(got, want) {
		t.Errorf("page %v, want %v", got, want)
	}
	if n := pgstore.ExactSearches(s); n != 0 {
		t.Errorf("%d searches scanned the table; the index should settle a tie by widening", n)
	}
}
