package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/internal/pgtest"
	"github.com/memvault/memvault/store"
)

// TestSearchUsesIndex checks the plan of the real search query over enough
// rows for the planner to prefer the index on its own costs (sequential
// scans are not disabled): the candidates must come from an index scan of
// store_vectors_embedding_idx, with and without a namespace prefix.
func TestSearchUsesIndex(t *testing.T) {
	for _, kind := range []store.ANNKind{store.HNSW, store.IVFFlat} {
		t.Run(string(kind), func(t *testing.T) {
			ctx := context.Background()
			pool := pgtest.Pool(t)
			s, err := New(pool, Options{Index: &store.IndexConfig{
				Embedder: embeddings.NewHashing(64),
				ANN:      store.ANNConfig{Kind: kind, Lists: 10},
			}})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			const n = 3000
			var ops []store.Op
			for i := range n {
				ops = append(ops, store.PutOp{
					Namespace: store.Namespace{"users", fmt.Sprintf("u%d", i%20)},
					Key:       fmt.Sprintf("k%d", i),
					Value:     map[string]any{"text": fmt.Sprintf("memory %d about topic %d and %d", i, i%37, i%11)},
				})
				if len(ops) == 500 {
					if _, err := s.Batch(ctx, ops); err != nil {
						t.Fatal(err)
					}
					ops = ops[:0]
				}
			}
			if _, err := pool.Exec(ctx, `ANALYZE store; ANALYZE store_vectors`); err != nil {
				t.Fatal(err)
			}
			q, err := s.embedQuery(ctx, "memory about topic 3")
			if err != nil {
				t.Fatal(err)
			}
			for _, prefix := range []store.Namespace{nil, {"users"}, {"users", "u3"}} {
				opt := store.SearchOptions{Query: "x", Limit: 10}
				sql, a, _, err := s.buildQuery(opt, s.nowUTC(), s.annQuery(prefix, vectorText(q), candidates(10, 1, false)))
				if err != nil {
					t.Fatal(err)
				}
				plan := explain(t, s, prefix, sql, a)
				t.Logf("prefix %v:\n%s", prefix, plan)
				// A selective prefix may rightly get an exact scan: the
				// planner sees its selectivity, as search statements are
				// planned with their parameters.
				if len(prefix) < 2 && !strings.Contains(plan, "Index Scan using store_vectors_embedding_idx") {
					t.Errorf("prefix %v: the search does not use the index:\n%s", prefix, plan)
				}
				// And the search returns a full page of ranked items.
				items, err := s.Search(ctx, prefix, store.SearchOptions{Query: "memory about topic 3"})
				if err != nil {
					t.Fatal(err)
				}
				if len(items) != 10 || items[0].Score == nil {
					t.Fatalf("prefix %v: %d items", prefix, len(items))
				}
			}
		})
	}
}

// explain returns the plan of sql as Search would run it (with its
// per-query settings).
func explain(t *testing.T, s *Store, prefix store.Namespace, sql string, a args) string {
	t.Helper()
	ctx := context.Background()
	tx, err := s.db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	for _, kv := range s.annSettings(ctx, 30, false) {
		if _, err := tx.Exec(ctx, `SELECT set_config($1, $2, true)`, kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := tx.Query(ctx, "EXPLAIN "+sql, a...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		b.WriteString(line + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
