package pgstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/cache"
	"github.com/memvault/memvault/store/pgstore"
)

// benchItems is the size of the searched corpus.
const benchItems = 10000

var benchWords = strings.Fields(`apple banana cherry date river mountain ocean forest city village
coffee tea bread cheese music painting novel poem doctor lawyer teacher engineer morning evening
winter summer travel train flight hotel budget salary invoice meeting project deadline holiday
garden kitchen bicycle running swimming football chess guitar piano camera phone laptop`)

// benchText is a deterministic pseudo-sentence for item i.
func benchText(r *rand.Rand) string {
	n := 6 + r.IntN(6)
	w := make([]string, n)
	for i := range w {
		w[i] = benchWords[r.IntN(len(benchWords))]
	}
	return strings.Join(w, " ")
}

// BenchmarkStore measures put (with embedding: 64-dim hashing embedder),
// get and search k=10 over 10 000 items, plaintext and encrypted, with an
// HNSW index and without (flat), next to the raw pgvector query
// "ORDER BY embedding <=> $q LIMIT 10" on the same table.
func BenchmarkStore(b *testing.B) {
	for _, cfg := range []struct {
		name     string
		kind     pgstore.ANNKind
		encrypt  bool
		subjects bool // per-subject keys: each ("users", "u<n>") its own subject
	}{
		{"Plain/HNSW", pgstore.HNSW, false, false},
		{"Plain/Flat", pgstore.Flat, false, false},
		{"Encrypted/HNSW", pgstore.HNSW, true, false},
		{"Encrypted/Flat", pgstore.Flat, true, false},
		{"Subjects/HNSW", pgstore.HNSW, true, true},
	} {
		b.Run(cfg.name, func(b *testing.B) {
			ctx := context.Background()
			opts := pgstore.Options{Index: &store.IndexConfig{
				Embedder: embeddings.NewUnkeyedHashing(64),
				Fields:   []string{"text"},
			}, ANN: pgstore.ANNConfig{Kind: cfg.kind}}
			var ser serde.Serializer
			if cfg.encrypt {
				ser = newSealed(b)
				if cfg.subjects {
					ser = testkeys.Subjects(b)
				}
				opts.Serde = ser
			}
			s, pool := open(b, opts)
			r := rand.New(rand.NewPCG(1, 2))
			var ops []store.Op
			for i := range benchItems {
				ops = append(ops, store.PutOp{
					Namespace: store.Namespace{"users", fmt.Sprintf("u%d", i%100)},
					Key:       fmt.Sprintf("m%d", i),
					Value:     map[string]any{"text": benchText(r), "n": i, "kind": []string{"fact", "pref", "event"}[i%3]},
				})
				if len(ops) == 500 {
					if _, err := s.Batch(ctx, ops); err != nil {
						b.Fatal(err)
					}
					ops = ops[:0]
				}
			}
			for _, table := range []string{"store", "store_vectors"} {
				if _, err := pool.Exec(ctx, `VACUUM ANALYZE `+table); err != nil {
					b.Fatal(err)
				}
			}
			queries := make([]string, 100)
			for i := range queries {
				queries[i] = benchText(r)
			}
			users := store.Namespace{"users"}

			b.Run("Get", func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					ns := store.Namespace{"users", fmt.Sprintf("u%d", i%100)}
					it, err := s.Get(ctx, ns, fmt.Sprintf("m%d", i%benchItems))
					if err != nil || it == nil {
						b.Fatal(it, err)
					}
					i += 7919
				}
			})
			b.Run("GetViaCache", func(b *testing.B) {
				// store/cache in front: served from memory, staleness
				// bounded by its MaxAge.
				c, err := cache.New(s, cache.Options{})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					ns := store.Namespace{"users", fmt.Sprintf("u%d", i%100)}
					it, err := c.Get(ctx, ns, fmt.Sprintf("m%d", i%benchItems))
					if err != nil || it == nil {
						b.Fatal(it, err)
					}
					i = (i + 7919) % 1000
				}
			})
			search := func(s *pgstore.Store, prefix store.Namespace, filter map[string]any) func(b *testing.B) {
				return func(b *testing.B) {
					b.ReportAllocs()
					i := 0
					for b.Loop() {
						items, err := s.Search(ctx, prefix, store.SearchOptions{Query: queries[i%len(queries)], Filter: filter})
						if err != nil || len(items) != 10 {
							b.Fatal(len(items), err)
						}
						i++
					}
				}
			}
			b.Run("Search", search(s, users, nil))
			b.Run("SearchParallel16", func(b *testing.B) {
				b.ReportAllocs()
				b.SetParallelism(8) // × GOMAXPROCS (2 here) goroutines
				var n atomic.Int64
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						q := queries[n.Add(1)%int64(len(queries))]
						items, err := s.Search(ctx, users, store.SearchOptions{Query: q})
						if err != nil || len(items) != 10 {
							b.Error(len(items), err)
							return
						}
					}
				})
			})
			b.Run("SearchFiltered", search(s, users, map[string]any{"kind": "pref", "n": map[string]any{"$gte": 1000}}))
			b.Run("SearchOneUser", search(s, store.Namespace{"users", "u7"}, nil))
			if cfg.encrypt {
				nocache, err := pgstore.New(pool, pgstore.Options{Index: opts.Index, Serde: ser, CacheSize: -1})
				if err != nil {
					b.Fatal(err)
				}
				defer nocache.Close()
				b.Run("SearchNoValueCache", search(nocache, users, nil))
			}
			b.Run("RawSQL", func(b *testing.B) {
				// The reference: pgvector's nearest neighbours, keys only,
				// with the query vector already embedded.
				b.ReportAllocs()
				vecs := make([]string, len(queries))
				emb := embeddings.NewUnkeyedHashing(64)
				for i, q := range queries {
					v, err := emb.EmbedQuery(ctx, q)
					if err != nil {
						b.Fatal(err)
					}
					vecs[i] = "[" + strings.Trim(strings.Join(strings.Fields(fmt.Sprint(v)), ","), "[]") + "]"
				}
				raw := func(sql string) func(b *testing.B) {
					return func(b *testing.B) {
						b.ReportAllocs()
						i := 0
						for b.Loop() {
							rows, err := pool.Query(ctx, sql, vecs[i%len(vecs)])
							if err != nil {
								b.Fatal(err)
							}
							n := 0
							for rows.Next() {
								n++
							}
							if rows.Err() != nil || n != 10 {
								b.Fatal(n, rows.Err())
							}
							i++
						}
					}
				}
				b.Run("Keys", raw(`SELECT prefix, key FROM store_vectors ORDER BY embedding <=> $1::vector LIMIT 10`))
				// The same with the items' values, as a search returns them.
				b.Run("Values", raw(`SELECT s.prefix, s.key, s.value FROM (
    SELECT prefix, key FROM store_vectors ORDER BY embedding <=> $1::vector LIMIT 10) v
JOIN store s USING (prefix, key)`))
			})
			b.Run("Put", func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					err := s.Put(ctx, store.Namespace{"bench", "put"}, fmt.Sprintf("p%d", i), map[string]any{"text": benchText(r), "n": i})
					if err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		})
	}
}
