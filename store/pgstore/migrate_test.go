package pgstore_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/pgstore"
)

func indexDef(t *testing.T, pool *pgxpool.Pool, schema string) string {
	t.Helper()
	var def string
	err := pool.QueryRow(context.Background(), `SELECT coalesce((SELECT indexdef FROM pg_indexes
WHERE schemaname = $1 AND indexname = 'store_vectors_embedding_idx'), '')`, schema).Scan(&def)
	must(t, err)
	return def
}

func migrations(t *testing.T, pool *pgxpool.Pool, table string) string {
	t.Helper()
	var s string
	must(t, pool.QueryRow(context.Background(), `SELECT coalesce(string_agg(v::text, ',' ORDER BY v), '') FROM `+table).Scan(&s))
	return s
}

// TestSetupIdempotentAndConcurrent: Setup from many stores at once, then
// again, leaves one set of tables and migration rows.
func TestSetupIdempotentAndConcurrent(t *testing.T) {
	ctx := context.Background()
	pool, schema := pgtest.Schema(t)
	opts := pgstore.Options{Index: &store.IndexConfig{Embedder: embeddings.NewUnkeyedHashing(8)}, ANN: pgstore.ANNConfig{M: 8, EFConstruction: 32}}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			s, err := pgstore.New(pool, opts)
			if err == nil {
				err = s.Setup(ctx)
				s.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		must(t, err)
	}
	s, err := pgstore.New(pool, opts)
	must(t, err)
	defer s.Close()
	must(t, s.Setup(ctx))
	if got := migrations(t, pool, "store_migrations"); got != "0,1,2,3" {
		t.Errorf("store_migrations %s", got)
	}
	if got := migrations(t, pool, "vector_migrations"); got != "0,1,2" {
		t.Errorf("vector_migrations %s", got)
	}
	if def := indexDef(t, pool, schema); !strings.Contains(def, "USING hnsw (embedding vector_cosine_ops) WITH (m='8', ef_construction='32')") {
		t.Errorf("index %s", def)
	}
}

// TestSetupIndexKinds: each kind, distance and vector type gets LangGraph's
// DDL; flat creates no index and does not record vector migration 2; no
// index config creates no vector table.
func TestSetupIndexKinds(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name       string
		dims       int
		ann        pgstore.ANNConfig
		dist       store.Distance
		wantIndex  string
		wantColumn string
		wantMig    string
	}{
		// vector_l2_ops is vector's default operator class, which
		// pg_indexes leaves out.
		{"ivfflat-l2", 8, pgstore.ANNConfig{Kind: pgstore.IVFFlat, Lists: 7}, store.L2, "USING ivfflat (embedding) WITH (lists='7')", "vector(8)", "0,1,2"},
		{"hnsw-ip", 8, pgstore.ANNConfig{}, store.InnerProduct, "USING hnsw (embedding vector_ip_ops)", "vector(8)", "0,1,2"},
		{"halfvec-auto", 3072, pgstore.ANNConfig{}, store.Cosine, "USING hnsw (embedding halfvec_cosine_ops)", "halfvec(3072)", "0,1,2"},
		{"halfvec-asked", 8, pgstore.ANNConfig{HalfVec: true}, store.L2, "USING hnsw (embedding halfvec_l2_ops)", "halfvec(8)", "0,1,2"},
		{"flat", 8, pgstore.ANNConfig{Kind: pgstore.Flat}, store.Cosine, "", "vector(8)", "0,1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool, schema := pgtest.Schema(t)
			s, err := pgstore.New(pool, pgstore.Options{Index: &store.IndexConfig{
				Embedder: embeddings.NewUnkeyedHashing(tc.dims), Distance: tc.dist,
			}, ANN: tc.ann})
			must(t, err)
			defer s.Close()
			for range 2 {
				must(t, s.Setup(ctx))
			}
			def := indexDef(t, pool, schema)
			if tc.wantIndex == "" && def != "" || !strings.Contains(def, tc.wantIndex) {
				t.Errorf("index %q, want %q", def, tc.wantIndex)
			}
			var col string
			must(t, pool.QueryRow(ctx, `SELECT format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid = 'store_vectors'::regclass AND attname = 'embedding'`).Scan(&col))
			if col != tc.wantColumn {
				t.Errorf("column %s, want %s", col, tc.wantColumn)
			}
			if got := migrations(t, pool, "vector_migrations"); got != tc.wantMig {
				t.Errorf("vector_migrations %s, want %s", got, tc.wantMig)
			}
			// The store works with it.
			must(t, s.Put(ctx, store.Namespace{"a"}, "k", map[string]any{"t": "hello world"}))
			items, err := s.Search(ctx, nil, store.SearchOptions{Query: "hello"})
			must(t, err)
			if len(items) != 1 || items[0].Score == nil {
				t.Fatalf("search %+v", items)
			}
		})
	}

	t.Run("no-index", func(t *testing.T) {
		_, pool := open(t, pgstore.Options{})
		if n := count(t, pool, `SELECT count(*) FROM pg_tables WHERE tablename IN ('store_vectors', 'vector_migrations') AND schemaname = current_schema()`); n != 0 {
			t.Fatalf("%d vector tables without an index", n)
		}
	})
}

// TestSchemaOption: with Options.Schema every table lives in that schema,
// whatever the connection's search_path.
func TestSchemaOption(t *testing.T) {
	ctx := context.Background()
	pool, schema := pgtest.Schema(t)
	s, err := pgstore.New(pool, pgstore.Options{
		Schema: schema + "_Mixed \"Case\"",
		Index:  &store.IndexConfig{Embedder: embeddings.NewUnkeyedHashing(8)},
	})
	must(t, err)
	defer s.Close()
	t.Cleanup(func() {
		_, _ = pool.Exec(context.Background(), `DROP SCHEMA IF EXISTS "`+schema+`_Mixed ""Case""" CASCADE`)
	})
	must(t, s.Setup(ctx))
	must(t, s.Put(ctx, store.Namespace{"a"}, "k", map[string]any{"t": "x"}))
	if n := count(t, pool, `SELECT count(*) FROM "`+schema+`_Mixed ""Case""".store_vectors`); n != 1 {
		t.Fatalf("%d vectors in the named schema", n)
	}
	if n := count(t, pool, `SELECT count(*) FROM pg_tables WHERE schemaname = $1`, schema); n != 0 {
		t.Fatalf("%d tables in the search_path schema", n)
	}
	items, err := s.Search(ctx, nil, store.SearchOptions{Query: "x"})
	must(t, err)
	if len(items) != 1 {
		t.Fatalf("%d items", len(items))
	}
}

// TestNewRejectsBadIndex: bad index configs fail in New, not at first use.
func TestNewRejectsBadIndex(t *testing.T) {
	pool := pgtest.Pool(t)
	h8 := embeddings.NewUnkeyedHashing(8)
	for _, opts := range []pgstore.Options{
		{Index: &store.IndexConfig{}},
		{Index: &store.IndexConfig{Embedder: h8, Dims: 9}},
		{Index: &store.IndexConfig{Embedder: h8, Distance: "manhattan"}},
		{Index: &store.IndexConfig{Embedder: h8, Fields: []string{"a["}}},
		{Index: &store.IndexConfig{Embedder: h8}, ANN: pgstore.ANNConfig{Kind: "lsh"}},
		{Index: &store.IndexConfig{Embedder: h8}, ANN: pgstore.ANNConfig{M: -1}},
		{Index: &store.IndexConfig{Embedder: embeddings.NewUnkeyedHashing(4001)}},
	} {
		if _, err := pgstore.New(pool, opts); err == nil {
			t.Errorf("New accepted %+v %+v", *opts.Index, opts.ANN)
		}
	}
}
