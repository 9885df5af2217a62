package redisstore_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/backends/redis/redisstore"
	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/engine"
)

// tableEmbedder embeds "d<i>" as docs[i] and "q<j>" as queries[j]: the
// benchmark's vectors, made beforehand.
type tableEmbedder struct {
	dims          int
	docs, queries [][]float32
}

func (e *tableEmbedder) lookup(text string) ([]float32, error) {
	i, err := strconv.Atoi(text[1:])
	if err != nil {
		return nil, err
	}
	if text[0] == 'q' {
		return e.queries[i], nil
	}
	return e.docs[i], nil
}

func (e *tableEmbedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v, err := e.lookup(t)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func (e *tableEmbedder) EmbedQuery(_ context.Context, text string) ([]float32, error) {
	return e.lookup(text)
}
func (e *tableEmbedder) Dims() int    { return e.dims }
func (e *tableEmbedder) Name() string { return "bench-table:" + strconv.Itoa(e.dims) }

// clusteredVectors are n unit vectors shaped as text embeddings are: a
// shared component, one of n/100 topic centroids and gaussian noise (as
// store/sqlitestore's 1536-dimension benchmark), and queries that are
// stored vectors with noise added.
func clusteredVectors(n, q, dims int) (docs, queries [][]float32) {
	r := rand.New(rand.NewPCG(7, 7))
	gauss := func() []float32 {
		v := make([]float32, dims)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return unit(v)
	}
	common := gauss()
	cents := make([][]float32, max(n/100, 4))
	for i := range cents {
		cents[i] = gauss()
	}
	mix := func(parts ...[]float32) []float32 {
		v := make([]float32, dims)
		w := []float32{0.5, 0.7, 0.5}
		for p, part := range parts {
			for i := range v {
				v[i] += w[p] * part[i]
			}
		}
		return unit(v)
	}
	for range n {
		docs = append(docs, mix(common, cents[r.IntN(len(cents))], gauss()))
	}
	for range q {
		queries = append(queries, mix(common, docs[r.IntN(n)], gauss()))
	}
	return docs, queries
}

func unit(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	n := float32(math.Sqrt(s))
	for i := range v {
		v[i] /= n
	}
	return v
}

// bruteTop10 is the exact top 10 of q among docs (indexes).
func bruteTop10(docs [][]float32, q []float32) []int {
	type sc struct {
		i int
		s float32
	}
	all := make([]sc, len(docs))
	for i, d := range docs {
		all[i] = sc{i, dot32(d, q)}
	}
	slices.SortFunc(all, func(a, b sc) int {
		if a.s != b.s {
			if a.s > b.s {
				return -1
			}
			return 1
		}
		return a.i - b.i
	})
	out := make([]int, 10)
	for i := range out {
		out[i] = all[i].i
	}
	return out
}

func dot32(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func recall(got []int, want []int) float64 {
	n := 0
	for _, g := range got {
		if slices.Contains(want, g) {
			n++
		}
	}
	return float64(n) / float64(len(want))
}

// BenchmarkStore: search k = 10 among MEMVAULT_BENCH_ITEMS (default
// 10 000) items of 1 536 dimensions on Redis 8, through the store (vector
// set candidates, rows read and scored exactly), through the store
// without vector sets (the code index, as on Redis 7) against a raw VSIM of the
// same vectors in a plain vector set (COUNT 10, and COUNT 10 plus reading
// the ten values, which an application needs too), each with its recall@10
// against brute force over 100 queries.
func BenchmarkStore(b *testing.B) {
	ctx := context.Background()
	n, dims := 10000, 1536
	if v, err := strconv.Atoi(os.Getenv("MEMVAULT_BENCH_ITEMS")); err == nil && v > 0 {
		n = v
	}
	docs, queries := clusteredVectors(n, 100, dims)
	emb := &tableEmbedder{dims: dims, docs: docs, queries: queries}
	// A commit of 50 vectors takes seconds on a loaded machine: past
	// go-redis's default ReadTimeout (3 s), which would send it again.
	rdb := redis.NewClient(&redis.Options{Addr: redistest.Shared(b, 8).Addr, ReadTimeout: 5 * time.Minute})
	b.Cleanup(func() { _ = rdb.Close() })
	// A batch's commit adds its vectors to the vector set in one script
	// (10-20 ms a vector of 1 536 dimensions on a loaded machine): small
	// batches, and a lease that outlasts one.
	prefix := redistest.Prefix()
	idx := &store.IndexConfig{Embedder: emb, Fields: []string{"text"}}
	st := newStore(b, rdb, redisstore.Options{Prefix: prefix, Index: idx, Lease: 10 * time.Minute})
	raw := "{" + redistest.Prefix() + "}:rawvs"
	for lo := 0; lo < n; lo += 50 {
		var ops []store.Op
		pipe := rdb.Pipeline()
		for i := lo; i < min(lo+50, n); i++ {
			ns := store.Namespace{"bench", fmt.Sprint("n", i%10)}
			ops = append(ops, store.PutOp{Namespace: ns, Key: fmt.Sprint(i), Value: map[string]any{"text": fmt.Sprint("d", i)}})
			pipe.Do(ctx, "VADD", raw, "FP32", fp32le(docs[i]), strconv.Itoa(i))
			pipe.HSet(ctx, raw+":"+strconv.Itoa(i), "text", fmt.Sprint("d", i))
		}
		t0 := time.Now()
		if _, err := st.Batch(ctx, ops); err != nil {
			b.Fatal(err)
		}
		if os.Getenv("MEMVAULT_BENCH_VERBOSE") != "" {
			b.Logf("batch at %d: %v", lo, time.Since(t0))
		}
		if _, err := pipe.Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.Cleanup(func() {
		keys, _ := rdb.Keys(ctx, raw+"*").Result()
		for len(keys) > 0 {
			c := keys[:min(len(keys), 1000)]
			keys = keys[len(c):]
			rdb.Del(ctx, c...)
		}
	})
	want := make([][]int, len(queries))
	for j, q := range queries {
		want[j] = bruteTop10(docs, q)
	}
	// The same store ranked by the code index (as on Redis 7): its
	// vectors (61 MB) exceed the exact float copy's budget.
	ci := newStore(b, rdb, redisstore.Options{Prefix: prefix, Index: idx, NoVectorSets: true})
	search := func(s *redisstore.Store, j int) []int {
		res, err := s.Search(ctx, nil, store.SearchOptions{Query: fmt.Sprint("q", j), Limit: 10})
		if err != nil {
			b.Fatal(err)
		}
		out := make([]int, len(res))
		for i, it := range res {
			out[i], _ = strconv.Atoi(it.Key)
		}
		return out
	}
	rawSearch := func(j int, values bool, extra ...any) []int {
		els, err := rdb.Do(ctx, append([]any{"VSIM", raw, "FP32", fp32le(queries[j]), "COUNT", 10}, extra...)...).StringSlice()
		if err != nil {
			b.Fatal(err)
		}
		if values {
			pipe := rdb.Pipeline()
			for _, e := range els {
				pipe.HGetAll(ctx, raw+":"+e)
			}
			if _, err := pipe.Exec(ctx); err != nil {
				b.Fatal(err)
			}
		}
		out := make([]int, len(els))
		for i, e := range els {
			out[i], _ = strconv.Atoi(e)
		}
		return out
	}
	// Interleaved: each iteration times one store search and one raw
	// VSIM (COUNT 10, values read) of the same query, so that both see
	// the same load; the ratio of the sums is the figure to compare.
	b.Run("interleaved_store_vs_raw", func(b *testing.B) {
		var ts, tr, tc time.Duration
		i := 0
		for b.Loop() {
			j := i % len(queries)
			t0 := time.Now()
			search(st, j)
			t1 := time.Now()
			rawSearch(j, true)
			t2 := time.Now()
			search(ci, j)
			t3 := time.Now()
			ts, tr, tc = ts+t1.Sub(t0), tr+t2.Sub(t1), tc+t3.Sub(t2)
			i++
		}
		b.ReportMetric(float64(ts.Microseconds())/float64(i), "store-µs/op")
		b.ReportMetric(float64(tr.Microseconds())/float64(i), "raw-µs/op")
		b.ReportMetric(float64(tc.Microseconds())/float64(i), "codeindex-µs/op")
		b.ReportMetric(float64(ts)/float64(tr), "store/raw")
	})
	for _, bc := range []struct {
		name string
		run  func(j int) []int
	}{
		{"store_search_k10", func(j int) []int { return search(st, j) }},
		{"store_search_k10_codeindex", func(j int) []int { return search(ci, j) }},
		{"raw_vsim_k10", func(j int) []int { return rawSearch(j, false) }},
		{"raw_vsim_k10_values", func(j int) []int { return rawSearch(j, true) }},
		// The store asks with EF 200 (see Nearest): the raw query at the
		// same effort.
		{"raw_vsim_k10_ef200_values", func(j int) []int { return rawSearch(j, true, "EF", 200) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var r float64
			for j := range queries {
				r += recall(bc.run(j), want[j])
			}
			i := 0
			for b.Loop() {
				bc.run(i % len(queries))
				i++
			}
			b.ReportMetric(r/float64(len(queries)), "recall@10")
			if os.Getenv("MEMVAULT_BENCH_VERBOSE") != "" {
				b.Logf("exact searches: store %d, code index %d; rescored %d", engine.ExactSearches(st.Engine), engine.ExactSearches(ci.Engine), engine.IndexStats(ci.Engine).Rescored.Load())
			}
		})
	}
}

func fp32le(v []float32) []byte {
	var sb strings.Builder
	for _, f := range v {
		u := math.Float32bits(f)
		sb.WriteByte(byte(u))
		sb.WriteByte(byte(u >> 8))
		sb.WriteByte(byte(u >> 16))
		sb.WriteByte(byte(u >> 24))
	}
	return []byte(sb.String())
}
