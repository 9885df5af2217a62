package pgstore

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/store"
)

// TestSearchUsesIndex checks the plan of the real search query over enough
// rows for the planner to prefer the index on its own costs (sequential
// scans are not disabled): the candidates must come from an index scan of
// store_vectors_embedding_idx, with and without a namespace prefix.
func TestSearchUsesIndex(t *testing.T) {
	for _, kind := range []ANNKind{HNSW, IVFFlat} {
		t.Run(string(kind), func(t *testing.T) {
			ctx := context.Background()
			pool := pgtest.Pool(t)
			s, err := New(pool, Options{Index: &store.IndexConfig{
				Embedder: embeddings.NewUnkeyedHashing(64),
			}, ANN: ANNConfig{Kind: kind, Lists: 10}})
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
			q, err := s.embedder().EmbedQuery(ctx, "memory about topic 3")
			if err != nil {
				t.Fatal(err)
			}
			for _, prefix := range []store.Namespace{nil, {"users"}, {"users", "u3"}} {
				var shapes [2]string // each plan without its query-vector lines
				for i, prepared := range []bool{false, true} {
					// 11 candidates: the engine's first ask for a page of 10.
					sql, a, err := s.d.buildQuery(nil, pgTime(time.Now()), s.d.annQuery(prefix, vectorText(q), 11, literal(prepared, prefix), false))
					if err != nil {
						t.Fatal(err)
					}
					plan := explain(t, s, prepared, sql, a)
					t.Logf("prefix %v, prepared %v:\n%s", prefix, prepared, plan)
					if prepared && len(prefix) > 0 && strings.Contains(sql, "users") {
						t.Errorf("prefix in the SQL text unescaped:\n%s", sql)
					}
					// A selective prefix may rightly get an exact scan: the
					// planner sees its selectivity, as search statements are
					// planned with their parameters or hold the prefix.
					if len(prefix) < 2 && !strings.Contains(plan, "Index Scan using store_vectors_embedding_idx") {
						t.Errorf("prefix %v, prepared %v: the search does not use the index:\n%s", prefix, prepared, plan)
					}
					for _, line := range strings.Split(plan, "\n") {
						if !strings.Contains(line, "Order By:") && !strings.Contains(line, "Sort Key:") {
							shapes[i] += line + "\n"
						}
					}
				}
				// The cached statement, prefix written in, is planned as the
				// statement planned with the prefix as a parameter.
				if shapes[0] != shapes[1] {
					t.Errorf("prefix %v: the prepared statement's generic plan differs:\n%s\nfrom\n%s", prefix, shapes[1], shapes[0])
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
// per-query settings); with prepared, the generic plan of the statement
// prepared, as a cached statement gets after its first executions.
func explain(t *testing.T, s *Store, prepared bool, sql string, a args) string {
	t.Helper()
	ctx := context.Background()
	tx, err := s.d.db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	for _, kv := range s.d.annSettings(ctx, 30, false) {
		if _, err := tx.Exec(ctx, `SELECT set_config($1, $2, true)`, kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	explain := "EXPLAIN " + sql
	if prepared {
		if _, err := tx.Exec(ctx, "PREPARE mv_explain AS "+sql); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "SET LOCAL plan_cache_mode = force_generic_plan"); err != nil {
			t.Fatal(err)
		}
		// EXECUTE takes no parameters of its own: its arguments are
		// written as constants.
		params := make([]string, len(a))
		for i, v := range a {
			switch v := v.(type) {
			case string:
				params[i], _ = escapeLiteral(v)
			case time.Time: // the expiry cutoff
				params[i] = "'" + v.UTC().Format(time.RFC3339Nano) + "'::timestamptz"
			default:
				t.Fatalf("argument %d is a %T", i+1, v)
			}
		}
		explain = "EXPLAIN EXECUTE mv_explain(" + strings.Join(params, ", ") + ")"
		a = nil
	}
	rows, err := tx.Query(ctx, explain, a...)
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
	if prepared { // prepared statements outlive transactions
		if _, err := tx.Exec(ctx, "DEALLOCATE mv_explain"); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// literal is the prefix condition written into a cached statement, or ""
// for the parameterized one.
func literal(prepared bool, prefix store.Namespace) string {
	if !prepared {
		return ""
	}
	cond, _ := nsCondLiteral("sv.prefix", prefix)
	return cond
}

// TestDeleteItemsByPrimaryKey: on plain PostgreSQL a write's delete of
// keys looks each up by primary key. A repeated prefix = ANY($1) condition
// (Citus's shard pruning, see prune) made the planner read the whole
// prefixes through store_prefix_idx instead, ten times slower; prune must
// leave it out here.
func TestDeleteItemsByPrimaryKey(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	s, err := New(pool, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO store (prefix, key, value) SELECT 'users.u' || (i % 300), 'x' || i, '{}' FROM generate_series(1, 30000) i`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `ANALYZE store`); err != nil {
		t.Fatal(err)
	}
	var prefixes, keys []string
	for i := range 10 {
		prefixes, keys = append(prefixes, fmt.Sprintf("users.u%d", i%3)), append(keys, fmt.Sprintf("x%d", i))
	}
	rows, err := pool.Query(ctx, "EXPLAIN "+s.d.deleteItems(), prefixes, keys)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(plan, "\n")
	if !strings.Contains(text, "store_pkey") || strings.Contains(text, "store_prefix_idx") {
		t.Fatalf("the delete of 10 keys does not look them up by primary key:\n%s", text)
	}
}
