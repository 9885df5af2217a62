package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/store"
	pgstore "github.com/memvault/memvault/store/postgres"
)

const benchStoreDims = 64

// benchWords is the vocabulary of the synthetic memories the store bench
// writes: short sentences of 8-16 words drawn with a fixed seed.
var benchWords = strings.Fields(`customer prefers email phone chat invoice refund charge plan premium
basic annual monthly billing address shipping order delivery late damaged replacement warranty
password login account locked reset security device mobile desktop browser language english spanish
portuguese german french timezone morning evening weekend meeting call schedule reminder birthday
allergy vegetarian coffee tea travel flight hotel booking cancel upgrade downgrade discount coupon
loyalty points support ticket escalation manager feedback survey rating complaint praise`)

func benchText(r *rand.Rand) string {
	n := 8 + r.IntN(9)
	w := make([]string, n)
	for i := range w {
		w[i] = benchWords[r.IntN(len(benchWords))]
	}
	return strings.Join(w, " ")
}

type storeVariant struct {
	name   string // "hnsw" or "flat"
	mode   string // "plaintext" or "encrypted"
	schema string
	st     *pgstore.Store
}

func benchStore(ctx context.Context, out io.Writer, dsn string, asJSON bool, bf benchFlags) error {
	if err := bf.checkOps("put", "get", "search_k10"); err != nil {
		return err
	}
	pool, schema, drop, err := benchSchema(ctx, dsn, bf.concurrency)
	if err != nil {
		return err
	}
	defer drop()
	sers, err := benchSerializers()
	if err != nil {
		return err
	}
	p := &benchPrinter{out: out, json: asJSON}
	if !asJSON {
		fmt.Fprintf(out, "store bench: %d items of %d dims (offline hashing embedder), %s per row, concurrency 1 and %d\n", bf.items, benchStoreDims, bf.duration, bf.concurrency)
	}
	settings, err := clusterSettings(ctx, pool)
	if err != nil {
		return err
	}
	if err := p.settings(settings); err != nil {
		return err
	}
	var variants []*storeVariant
	for _, kind := range []store.ANNKind{store.HNSW, store.Flat} {
		for _, mode := range []string{"plaintext", "encrypted"} {
			sch := fmt.Sprintf("%s_%s_%s", schema, kind, mode[:3])
			if _, err := pool.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{sch}.Sanitize()); err != nil {
				return err
			}
			defer pool.Exec(context.Background(), "DROP SCHEMA "+pgx.Identifier{sch}.Sanitize()+" CASCADE") //nolint:errcheck // best-effort cleanup
			idx := &store.IndexConfig{Dims: benchStoreDims, Embedder: embeddings.NewHashing(benchStoreDims), Fields: []string{"text"}, ANN: store.ANNConfig{Kind: kind}}
			o := pgstore.Options{Schema: sch, Index: idx}
			if mode == "encrypted" {
				o.Serde = sers["encrypted"]
			}
			st, err := pgstore.New(pool, o)
			if err != nil {
				return err
			}
			defer st.Close()
			if err := st.Setup(ctx); err != nil {
				return err
			}
			variants = append(variants, &storeVariant{name: string(kind), mode: mode, schema: sch, st: st})
		}
	}
	// Seed every variant with the same items, in batches.
	start := time.Now()
	for _, v := range variants {
		r := rand.New(rand.NewPCG(1, 2))
		const batch = 500
		for i := 0; i < bf.items; i += batch {
			ops := make([]store.Op, 0, batch)
			for j := i; j < min(i+batch, bf.items); j++ {
				ops = append(ops, store.PutOp{Namespace: store.Namespace{"users", fmt.Sprintf("u%d", j%100), "memories"}, Key: fmt.Sprintf("m%d", j), Value: map[string]any{"text": benchText(r), "n": j}})
			}
			if _, err := v.st.Batch(ctx, ops); err != nil {
				return err
			}
		}
	}
	if _, err := pool.Exec(ctx, "ANALYZE"); err != nil {
		return err
	}
	if !asJSON {
		fmt.Fprintf(out, "seeded %d stores in %s\n\n", len(variants), time.Since(start).Round(time.Millisecond))
	}
	emb := embeddings.NewHashing(benchStoreDims)
	queries := make([]string, 64)
	qvecs := make([]string, len(queries))
	r := rand.New(rand.NewPCG(3, 4))
	for i := range queries {
		queries[i] = benchText(r)
		v, err := emb.EmbedQuery(ctx, queries[i])
		if err != nil {
			return err
		}
		qvecs[i] = vecLiteral(v)
	}
	byMode := map[string]*storeVariant{}
	var modes []string
	for _, v := range variants {
		label := v.mode + "/" + v.name
		byMode[label] = v
		modes = append(modes, label)
	}
	hnswSchema := variants[0].schema
	ops := []struct {
		name string
		fn   func(v *storeVariant) benchOp
	}{
		{"put", func(v *storeVariant) benchOp {
			// New items like the seeded ones, under the searched prefix, so
			// that they neither crowd the queries' neighbourhoods nor get
			// filtered out of the candidates.
			texts := make([]string, 4096)
			r := rand.New(rand.NewPCG(5, 6))
			for i := range texts {
				texts[i] = benchText(r)
			}
			return func(ctx context.Context, i int64) error {
				// The key in the text keeps vectors distinct: items with
				// identical vectors tie, and a tie at a page boundary sends
				// the search to an exact query (see store/postgres).
				key := fmt.Sprintf("k%d", i%5000)
				return v.st.Put(ctx, store.Namespace{"users", "bench", "put"}, key, map[string]any{"text": texts[i%int64(len(texts))] + " " + key, "i": i})
			}
		}},
		{"get", func(v *storeVariant) benchOp {
			return func(ctx context.Context, i int64) error {
				j := i % int64(bf.items)
				it, err := v.st.Get(ctx, store.Namespace{"users", fmt.Sprintf("u%d", j%100), "memories"}, fmt.Sprintf("m%d", j))
				if err == nil && it == nil {
					err = fmt.Errorf("item m%d missing", j)
				}
				return err
			}
		}},
		{"search_k10", func(v *storeVariant) benchOp {
			if v == nil { // the baseline: the raw nearest-neighbour query
				return func(ctx context.Context, i int64) error {
					return rawNearest(ctx, pool, hnswSchema, qvecs[i%int64(len(qvecs))])
				}
			}
			return func(ctx context.Context, i int64) error {
				res, err := v.st.Search(ctx, store.Namespace{"users"}, store.SearchOptions{Query: queries[i%int64(len(queries))], Limit: 10})
				if err == nil && len(res) != 10 {
					err = fmt.Errorf("search returned %d items", len(res))
				}
				return err
			}
		}},
	}
	for _, conc := range []int{1, bf.concurrency} {
		for _, op := range ops {
			if !bf.wants(op.name) {
				continue
			}
			rowModes := modes
			if op.name == "search_k10" {
				rowModes = append([]string{"raw-pgx"}, modes...)
			}
			rows, err := compare(ctx, "store", op.name, rowModes, conc, bf.duration, func(mode string) benchOp { return op.fn(byMode[mode]) }, nil)
			if err != nil {
				return err
			}
			for _, r := range rows {
				if err := p.print(r); err != nil {
					return err
				}
			}
		}
	}
	p.summary("raw-pgx")
	return nil
}

// rawNearest is the baseline: the nearest-neighbour query the HNSW index
// serves, without the library (no embedding, no join, no decoding).
func rawNearest(ctx context.Context, pool *pgxpool.Pool, schema, q string) error {
	rows, err := pool.Query(ctx, `SELECT prefix, key FROM `+pgx.Identifier{schema, "store_vectors"}.Sanitize()+` ORDER BY embedding <=> $1::vector LIMIT 10`, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var prefix, key string
		if err := rows.Scan(&prefix, &key); err != nil {
			return err
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if n != 10 {
		return fmt.Errorf("raw query returned %d rows", n)
	}
	return nil
}

func vecLiteral(v []float32) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, x := range v {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%g", x)
	}
	b.WriteByte(']')
	return b.String()
}
