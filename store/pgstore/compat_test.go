package pgstore_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/store/internal/filtering"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/pgstore"
)

// fixtureEmbedder embeds the texts of testdata/langgraph_schema.sql.
func fixtureEmbedder() *tableEmbedder {
	return &tableEmbedder{dims: 3, vectors: map[string][]float32{
		"pizza":  {1, 0, 0},
		"cat":    {0, 1, 0},
		"Tom":    {0.6, 0.8, 0},
		"kitten": {0, 1, 0},
		"tomato": {0.6, 0.8, 0},
	}}
}

// loadFixture fills a fresh schema with the tables and rows LangGraph's
// Python PostgresStore writes.
func loadFixture(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool := pgtest.Pool(t)
	sql, err := os.ReadFile("testdata/langgraph_schema.sql")
	must(t, err)
	_, err = pool.Exec(context.Background(), string(sql))
	must(t, err)
	return pool
}

// schemaSnapshot describes a schema's tables, columns, indexes, constraints
// and migration rows, with the schema's name removed. memvault's own
// objects (memvault_*) are left out: LangGraph's objects must match exactly,
// and memvault may add beside them.
func schemaSnapshot(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	q := func(sql string) {
		rows, err := pool.Query(ctx, sql)
		must(t, err)
		defer rows.Close()
		for rows.Next() {
			var s string
			must(t, rows.Scan(&s))
			out = append(out, s)
		}
		must(t, rows.Err())
	}
	q(`SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || coalesce(udt_name, '') || ' ' || is_nullable || ' ' || coalesce(column_default, '')
FROM information_schema.columns WHERE table_schema = current_schema() AND table_name NOT LIKE 'memvault\_%' ORDER BY 1`)
	q(`SELECT regexp_replace(indexdef, ' ON [^ ]+\.', ' ON ') FROM pg_indexes WHERE schemaname = current_schema() AND tablename NOT LIKE 'memvault\_%' ORDER BY 1`)
	q(`SELECT conrelid::regclass::text || ' ' || pg_get_constraintdef(oid) FROM pg_constraint
WHERE connamespace = current_schema()::regnamespace AND conrelid::regclass::text NOT LIKE 'memvault\_%' ORDER BY 1`)
	q(`SELECT 'store_migrations ' || string_agg(v::text, ',' ORDER BY v) FROM store_migrations`)
	q(`SELECT 'vector_migrations ' || coalesce(string_agg(v::text, ',' ORDER BY v), '') FROM vector_migrations`)
	return out
}

// TestSetupMatchesLangGraph: memvault's Setup on an empty schema creates
// exactly LangGraph's tables, indexes and migration rows, and on a schema
// LangGraph set up it changes nothing.
func TestSetupMatchesLangGraph(t *testing.T) {
	ctx := context.Background()
	python := loadFixture(t)
	if _, err := python.Exec(ctx, `DELETE FROM store`); err != nil {
		t.Fatal(err)
	}
	want := schemaSnapshot(t, python)

	s, err := pgstore.New(python, pgstore.Options{Index: &store.IndexConfig{Embedder: fixtureEmbedder()}})
	must(t, err)
	defer s.Close()
	must(t, s.Setup(ctx))
	if got := schemaSnapshot(t, python); !slices.Equal(got, want) {
		t.Errorf("Setup changed LangGraph's schema:\n got %q\nwant %q", got, want)
	}

	_, pool := open(t, pgstore.Options{Index: &store.IndexConfig{Embedder: fixtureEmbedder()}})
	if got := schemaSnapshot(t, pool); !slices.Equal(got, want) {
		t.Errorf("fresh Setup differs from LangGraph's:\n got %q\nwant %q", got, want)
	}
}

// TestReadsPythonRows: plain JSONB values and store_vectors rows written by
// Python are read, searched and filtered.
func TestReadsPythonRows(t *testing.T) {
	ctx := context.Background()
	pool := loadFixture(t)
	s, err := pgstore.New(pool, pgstore.Options{Index: &store.IndexConfig{Embedder: fixtureEmbedder()}})
	must(t, err)
	defer s.Close()
	must(t, s.Setup(ctx))

	it, err := s.Get(ctx, store.Namespace{"users", "alice"}, "prefs")
	must(t, err)
	if it == nil || !filtering.JSONEqual(it.Value, map[string]any{"food": "pizza", "n": 9}) {
		t.Fatalf("Get = %+v", it)
	}
	if want := time.Date(2025, 1, 2, 3, 4, 5, 123456000, time.UTC); !it.CreatedAt.Equal(want) {
		t.Errorf("CreatedAt = %v, want %v", it.CreatedAt, want)
	}
	note, err := s.Get(ctx, store.Namespace{"users", "bob"}, "note")
	must(t, err)
	if note == nil || !note.ExpiresAt.Equal(time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("Get note = %+v", note)
	}

	// "tomato" is [0.6 0.8 0]: pet scores 1 through its name vector (its
	// best field), prefs 0.6; bob's note has no vector and comes last.
	items, err := s.Search(ctx, store.Namespace{"users"}, store.SearchOptions{Query: "tomato"})
	must(t, err)
	if got, want := keysOf(items), []string{"users.alice/pet", "users.alice/prefs", "users.bob/note"}; !slices.Equal(got, want) {
		t.Fatalf("Search = %q, want %q", got, want)
	}
	for i, want := range []float64{1, 0.6} {
		if items[i].Score == nil || abs(*items[i].Score-want) > 1e-6 {
			t.Errorf("score of %s = %v, want %v", items[i].Key, items[i].Score, want)
		}
	}
	if items[2].Score != nil {
		t.Errorf("unindexed item scored %v", *items[2].Score)
	}

	// Numbers compare as numbers: LangGraph's text comparison would say
	// "10" < "5".
	items, err = s.Search(ctx, nil, store.SearchOptions{Filter: map[string]any{"n": map[string]any{"$gt": 5}}})
	must(t, err)
	if got, want := keysOf(items), []string{"users.alice/pet", "users.alice/prefs"}; !slices.Equal(got, want) {
		t.Fatalf("filtered Search = %q, want %q", got, want)
	}

	nss, err := s.ListNamespaces(ctx, store.ListNamespacesOptions{})
	must(t, err)
	if got := namespaces(nss); !slices.Equal(got, []string{"users.alice", "users.bob"}) {
		t.Fatalf("ListNamespaces = %q", got)
	}

	// Python sees memvault's plaintext writes as its own: plain JSONB.
	must(t, s.Put(ctx, store.Namespace{"users", "bob"}, "k", map[string]any{"food": "cat"}, store.WithIndex("food")))
	var raw string
	must(t, pool.QueryRow(ctx, `SELECT value::text FROM store WHERE prefix = 'users.bob' AND key = 'k'`).Scan(&raw))
	if raw != `{"food": "cat"}` {
		t.Errorf("stored value = %s", raw)
	}
	if n := count(t, pool, `SELECT count(*) FROM store_vectors WHERE prefix = 'users.bob' AND key = 'k' AND field_name = 'food'`); n != 1 {
		t.Errorf("%d vector rows", n)
	}
}

func namespaces(nss []store.Namespace) []string {
	out := make([]string, len(nss))
	for i, n := range nss {
		out[i] = strings.Join(n, ".")
	}
	return out
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

// TestNullEmbeddings: store_vectors rows with a NULL embedding (the column
// is nullable in LangGraph's schema) are ignored by searches.
func TestNullEmbeddings(t *testing.T) {
	ctx := context.Background()
	for _, kind := range []pgstore.ANNKind{pgstore.HNSW, pgstore.Flat} {
		t.Run(string(kind), func(t *testing.T) {
			s, pool := open(t, pgstore.Options{Index: &store.IndexConfig{Embedder: fixtureEmbedder(), Fields: []string{"food"}}, ANN: pgstore.ANNConfig{Kind: kind}})
			must(t, s.Put(ctx, store.Namespace{"u"}, "a", map[string]any{"food": "pizza"}))
			must(t, s.Put(ctx, store.Namespace{"u"}, "b", map[string]any{"food": "cat"}))
			_, err := pool.Exec(ctx, `UPDATE store_vectors SET embedding = NULL WHERE key = 'b'`)
			must(t, err)
			items, err := s.Search(ctx, nil, store.SearchOptions{Query: "pizza", Limit: 1})
			must(t, err)
			if got := keysOf(items); !slices.Equal(got, []string{"u/a"}) || items[0].Score == nil {
				t.Fatalf("Search = %q", got)
			}
			items, err = s.Search(ctx, nil, store.SearchOptions{Query: "pizza"})
			must(t, err)
			if got := keysOf(items); !slices.Equal(got, []string{"u/a", "u/b"}) || items[1].Score != nil {
				t.Fatalf("Search = %q", got)
			}
		})
	}
}
