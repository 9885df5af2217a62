package pgstore_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/pgstore"
)

// TestBulkBatchEqualsSinglePuts: a 5 000-item Batch, which goes through
// COPY, leaves exactly the rows (values, timestamps, TTLs, vectors) that
// 5 000 single puts leave, over a store that already held some of the
// items (upserts that move updated_at, replace TTLs and drop the vectors of
// fields an item no longer has) and with deletes in the batch.
func TestBulkBatchEqualsSinglePuts(t *testing.T) {
	if testing.Short() {
		t.Skip("PostgreSQL")
	}
	ctx := context.Background()
	const n = 5000
	clock := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	pool, schema := pgtest.Schema(t)
	openIn := func(name string) *pgstore.Store {
		sch := schema + "_" + name
		if _, err := pool.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{sch}.Sanitize()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			pool.Exec(context.Background(), "DROP SCHEMA "+pgx.Identifier{sch}.Sanitize()+" CASCADE") //nolint:errcheck // best-effort cleanup
		})
		s, err := pgstore.New(pool, pgstore.Options{
			Schema: sch,
			Now:    now,
			TTL:    &store.TTLConfig{SweepInterval: -1},
			Index:  &store.IndexConfig{Embedder: embeddings.NewUnkeyedHashing(32), Fields: []string{"text", "tags[*]"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if err := s.Setup(ctx); err != nil {
			t.Fatal(err)
		}
		return s
	}
	bulk, single := openIn("bulk"), openIn("single")

	ns := func(i int) store.Namespace { return store.Namespace{"users", fmt.Sprintf("u%d", i%37), "mem"} }
	key := func(i int) string { return fmt.Sprintf("k%05d", (i*7919)%n) } // not in key order
	// Before: every third item, with two tags and a TTL.
	for _, s := range []*pgstore.Store{bulk, single} {
		for i := 0; i < n; i += 3 {
			v := map[string]any{"text": fmt.Sprintf("old %d", i), "tags": []any{"a", fmt.Sprintf("t%d", i)}}
			if err := s.Put(ctx, ns(i), key(i), v, store.WithTTL(time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
	}
	clock = clock.Add(time.Minute)
	ops := make([]store.Op, 0, n+n/10)
	for i := range n {
		v := map[string]any{"text": fmt.Sprintf("memory %d", i), "n": i}
		var opts []store.PutOption
		switch i % 5 {
		case 0:
			opts = append(opts, store.WithTTL(30*time.Minute))
		case 1:
			v["tags"] = []any{fmt.Sprintf("t%d", i)} // one tag: the second's vector goes
		case 2:
			opts = append(opts, store.WithoutIndex())
		case 3:
			opts = append(opts, store.WithIndex("text"))
		}
		var o store.PutOptions
		for _, f := range opts {
			f(&o)
		}
		ops = append(ops, store.PutOp{Namespace: ns(i), Key: key(i), Value: v, Options: o})
	}
	for i := 1; i < n; i += 10 {
		ops = append(ops, store.PutOp{Namespace: ns(i + 1), Key: key(i + 1)}) // a delete
	}
	if _, err := bulk.Batch(ctx, ops); err != nil {
		t.Fatalf("Batch: %v", err)
	}
	for _, op := range ops {
		p := op.(store.PutOp)
		var err error
		if p.Value == nil {
			err = single.Delete(ctx, p.Namespace, p.Key)
		} else {
			err = single.Put(ctx, p.Namespace, p.Key, p.Value, func(o *store.PutOptions) { *o = p.Options })
		}
		if err != nil {
			t.Fatal(err)
		}
	}

	items := func(s string) []string {
		return dumpRows(t, pool, `SELECT prefix, key, value::text, created_at, updated_at, expires_at, ttl_minutes
FROM `+pgx.Identifier{schema + "_" + s, "store"}.Sanitize()+` ORDER BY prefix, key`)
	}
	vectors := func(s string) []string {
		return dumpRows(t, pool, `SELECT prefix, key, field_name, embedding::text, created_at, updated_at
FROM `+pgx.Identifier{schema + "_" + s, "store_vectors"}.Sanitize()+` ORDER BY prefix, key, field_name`)
	}
	bi, si := items("bulk"), items("single")
	if len(bi) != n-n/10 {
		t.Fatalf("%d items after the batch, want %d", len(bi), n-n/10)
	}
	if !slices.Equal(bi, si) {
		t.Fatalf("items differ: bulk %d rows, single %d; first difference %s", len(bi), len(si), firstDiff(bi, si))
	}
	bv, sv := vectors("bulk"), vectors("single")
	if !slices.Equal(bv, sv) {
		t.Fatalf("vectors differ: bulk %d rows, single %d; first difference %s", len(bv), len(sv), firstDiff(bv, sv))
	}
	// Every kind of row is there: TTLs, no index, one tag left.
	if len(bv) < n {
		t.Fatalf("only %d vectors", len(bv))
	}
}

func dumpRows(t *testing.T, pool *pgxpool.Pool, sql string) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), sql)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(vals...))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("row %d:\n  bulk   %s\n  single %s", i, a[i], b[i])
		}
	}
	return fmt.Sprintf("at row %d (one is longer)", min(len(a), len(b)))
}

// BenchmarkBatchPut1536 measures a 1 000-item Batch of new items with
// 1536-dimension vectors (no ANN index: the load, not the graph) through
// COPY (the default above 256 items) and through the one-round-trip
// unnest batch (the threshold raised past the batch).
func BenchmarkBatchPut1536(b *testing.B) {
	ctx := context.Background()
	emb := embeddings.NewUnkeyedHashing(1536)
	for _, tc := range []struct {
		name string
		min  int
	}{{"copy", 256}, {"unnest", 1 << 30}} {
		b.Run(tc.name, func(b *testing.B) {
			s, _ := open(b, pgstore.Options{Index: &store.IndexConfig{Embedder: emb, Fields: []string{"text"}}, ANN: pgstore.ANNConfig{Kind: pgstore.Flat}})
			pgstore.SetCopyMin(s, tc.min)
			const n = 1000
			for it := 0; b.Loop(); it++ {
				ops := make([]store.Op, n)
				for i := range ops {
					ops[i] = store.PutOp{Namespace: store.Namespace{"users", fmt.Sprintf("u%d", i%10)}, Key: fmt.Sprintf("k%d-%d", it, i),
						Value: map[string]any{"text": fmt.Sprintf("memory %d of batch %d about coffee and travel", i, it)}}
				}
				if _, err := s.Batch(ctx, ops); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "items/s")
		})
	}
}
