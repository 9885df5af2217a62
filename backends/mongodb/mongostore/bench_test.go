package mongostore_test

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/memvault/memvault/backends/mongodb/mongostore"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/store"
)

// benchItems is how many items of 256 dimensions BenchmarkStore holds
// (MEMVAULT_BENCH_ITEMS; default 10 000). FerretDB's SQLite backend
// evaluates most queries by reading every document, so populating takes
// minutes at the default.
func benchItems(b *testing.B) int {
	if s := os.Getenv("MEMVAULT_BENCH_ITEMS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		return n
	}
	return 10_000
}

// BenchmarkStore measures put, get and search (k = 10) on a store of
// benchItems × 256 dimensions, through memvault (plaintext, the code
// index and exact float copy of the engine) and through the Go driver
// alone ("raw": the same documents, a search reading every vector under
// the prefix and scoring it in Go, as a program without memvault does on
// a server without $vectorSearch), in the same run.
func BenchmarkStore(b *testing.B) {
	ctx := context.Background()
	n := benchItems(b)
	emb := denseEmbedder{256}
	ns := store.Namespace{"bench", "docs"}
	text := func(i int) string { return fmt.Sprintf("memory number %d of the benchmark", i) }

	b.Run("memvault", func(b *testing.B) {
		db := mongotest.Database(b)
		s := newStore(b, db, mongostore.Options{Index: &store.IndexConfig{Embedder: emb, Fields: []string{"text"}}})
		for start := 0; start < n; start += 500 {
			var ops []store.Op
			for i := start; i < min(n, start+500); i++ {
				ops = append(ops, store.PutOp{Namespace: ns, Key: fmt.Sprintf("k%06d", i), Value: map[string]any{"text": text(i)}})
			}
			if _, err := s.Batch(ctx, ops); err != nil {
				b.Fatal(err)
			}
		}
		b.Run("put", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if err := s.Put(ctx, ns, fmt.Sprintf("p%06d", i), map[string]any{"text": text(n + i)}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("get", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if it, err := s.Get(ctx, ns, fmt.Sprintf("k%06d", i%n)); err != nil || it == nil {
					b.Fatal(it, err)
				}
			}
		})
		b.Run("search", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				res, err := s.Search(ctx, ns, store.SearchOptions{Query: fmt.Sprintf("query %d", i), Limit: 10})
				if err != nil || len(res) != 10 {
					b.Fatal(len(res), err)
				}
			}
		})
	})

	b.Run("raw", func(b *testing.B) {
		db := mongotest.Database(b)
		items, vecs := db.Collection("items"), db.Collection("vectors")
		keys := bson.D{{Key: "namespace_str", Value: 1}, {Key: "key", Value: 1}}
		for _, c := range []*mongo.Collection{items, vecs} {
			if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: keys}); err != nil {
				b.Fatal(err)
			}
		}
		const nsStr = "bench/docs"
		put := func(key, txt string) error {
			now := time.Now()
			v, _ := emb.EmbedQuery(ctx, txt)
			f := bson.D{{Key: "namespace_str", Value: nsStr}, {Key: "key", Value: key}}
			if _, err := vecs.ReplaceOne(ctx, f, bson.D{f[0], f[1], {Key: "embedding", Value: v}}, options.Replace().SetUpsert(true)); err != nil {
				return err
			}
			_, err := items.ReplaceOne(ctx, f, bson.D{f[0], f[1], {Key: "value", Value: bson.D{{Key: "text", Value: txt}}},
				{Key: "created_at", Value: now}, {Key: "updated_at", Value: now}}, options.Replace().SetUpsert(true))
			return err
		}
		for start := 0; start < n; start += 500 {
			var is, vs []any
			now := time.Now()
			for i := start; i < min(n, start+500); i++ {
				v, _ := emb.EmbedQuery(ctx, text(i))
				key := fmt.Sprintf("k%06d", i)
				is = append(is, bson.D{{Key: "namespace_str", Value: nsStr}, {Key: "key", Value: key},
					{Key: "value", Value: bson.D{{Key: "text", Value: text(i)}}}, {Key: "created_at", Value: now}, {Key: "updated_at", Value: now}})
				vs = append(vs, bson.D{{Key: "namespace_str", Value: nsStr}, {Key: "key", Value: key}, {Key: "embedding", Value: v}})
			}
			if _, err := items.InsertMany(ctx, is); err != nil {
				b.Fatal(err)
			}
			if _, err := vecs.InsertMany(ctx, vs); err != nil {
				b.Fatal(err)
			}
		}
		b.Run("put", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if err := put(fmt.Sprintf("p%06d", i), text(n+i)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("get", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				var doc bson.M
				if err := items.FindOne(ctx, bson.D{{Key: "namespace_str", Value: nsStr}, {Key: "key", Value: fmt.Sprintf("k%06d", i%n)}}).Decode(&doc); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("search", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				q, _ := emb.EmbedQuery(ctx, fmt.Sprintf("query %d", i))
				cur, err := vecs.Find(ctx, bson.D{{Key: "namespace_str", Value: nsStr}})
				if err != nil {
					b.Fatal(err)
				}
				type scored struct {
					key   string
					score float64
				}
				var all []scored
				for cur.Next(ctx) {
					var d struct {
						Key       string    `bson:"key"`
						Embedding []float32 `bson:"embedding"`
					}
					if err := cur.Decode(&d); err != nil {
						b.Fatal(err)
					}
					all = append(all, scored{d.Key, cosine(q, d.Embedding)})
				}
				_ = cur.Close(ctx)
				slices.SortFunc(all, func(x, y scored) int { return cmp.Compare(y.score, x.score) })
				top := bson.A{}
				for _, s := range all[:10] {
					top = append(top, s.key)
				}
				cur, err = items.Find(ctx, bson.D{{Key: "namespace_str", Value: nsStr}, {Key: "key", Value: bson.D{{Key: "$in", Value: top}}}})
				if err != nil {
					b.Fatal(err)
				}
				var docs []bson.M
				if err := cur.All(ctx, &docs); err != nil || len(docs) != 10 {
					b.Fatal(len(docs), err)
				}
			}
		})
	})
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
