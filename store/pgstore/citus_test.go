package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/keys/pgkeys"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/pgstore"
	"github.com/memvault/memvault/store/storetest"
)

// openCitus returns a set-up store in a fresh schema on the Citus
// coordinator of pgtest.CitusSchema.
func openCitus(t *testing.T, opts pgstore.Options) *pgstore.Store {
	t.Helper()
	pool, _ := pgtest.CitusSchema(t)
	s, err := pgstore.New(pool, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Setup(context.Background()); err != nil {
		t.Fatalf("Setup: %v", err)
	}
	return s
}

// TestConformanceCitus runs the whole store suite on a Citus coordinator
// with two workers, plaintext: every write as one batch of statements, and
// every write through COPY into temporary staging tables (the bulk path,
// whose statements join coordinator-local tables with the shards).
func TestConformanceCitus(t *testing.T) {
	for _, bulk := range []bool{false, true} {
		name := "Batch"
		if bulk {
			name = "Bulk"
		}
		t.Run(name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, cfg storetest.Config) store.Store {
				s := openCitus(t, pgstore.Options{TTL: cfg.TTL, Now: cfg.Now, Index: cfg.Index})
				if bulk {
					pgstore.SetCopyMin(s, 1)
				}
				return s
			})
		})
	}
}

// TestConformanceCitusEncrypted is TestConformanceCitus with sealed values.
func TestConformanceCitusEncrypted(t *testing.T) {
	storetest.Run(t, func(t *testing.T, cfg storetest.Config) store.Store {
		var s serde.Serializer = newSealed(t)
		return openCitus(t, pgstore.Options{TTL: cfg.TTL, Now: cfg.Now, Index: cfg.Index, Serde: s})
	})
}

// TestErasureCitus runs the erasure suite on a Citus coordinator with the
// key table in the same database: the key table stays a local table of the
// coordinator (pgkeys creates it so, and Setup distributes only store and
// store_vectors), so a put's transaction holds its key's row FOR SHARE
// there while its rows go to a worker, and an erasure waits for it.
func TestErasureCitus(t *testing.T) {
	pool, schema := pgtest.CitusSchema(t)
	kt, err := pgkeys.New(pool, pgkeys.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if err := kt.Setup(t.Context()); err != nil {
		t.Fatal(err)
	}
	storetest.RunErasure(t, kt, func(t *testing.T, s serde.Serializer) store.Store {
		st, err := pgstore.New(pool, pgstore.Options{Serde: s})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		if err := st.Setup(context.Background()); err != nil {
			t.Fatal(err)
		}
		return st
	})
	for _, table := range []string{"store", "memvault_keys"} {
		t.Logf("%s: %s", table, citusTableType(t, pool, table))
	}
	if got := citusTableType(t, pool, "store"); got != "distributed by prefix" {
		t.Errorf("store is %s, want distributed by prefix", got)
	}
	if got := citusTableType(t, pool, "memvault_keys"); got != "local" {
		t.Errorf("memvault_keys is %s, want a local table of the coordinator", got)
	}
}

// citusTableType says what Citus made of table: "local" (not in Citus's
// metadata), "distributed by <column>", or its citus_table_type.
func citusTableType(t testing.TB, pool *pgxpool.Pool, table string) string {
	t.Helper()
	var typ, col *string
	err := pool.QueryRow(t.Context(), `SELECT citus_table_type, distribution_column FROM citus_tables WHERE table_name = to_regclass($1)`, table).Scan(&typ, &col)
	if errors.Is(err, pgx.ErrNoRows) {
		return "local"
	}
	if err != nil {
		t.Fatalf("citus_tables: %v", err)
	}
	if *typ == "distributed" && col != nil {
		return "distributed by " + *col
	}
	return *typ
}

// TestSetupDistributesExistingCitus: a database whose tables were created
// and filled before Citus (here: Setup's tables turned back into local
// tables, with items written into them) is distributed by the next Setup,
// its items kept, readable and searchable; a Setup after that changes
// nothing.
func TestSetupDistributesExistingCitus(t *testing.T) {
	ctx := t.Context()
	pool, _ := pgtest.CitusSchema(t)
	opts := pgstore.Options{Index: &store.IndexConfig{Embedder: storetest.NewAxisEmbedder("apple", "banana")}}
	s, err := pgstore.New(pool, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `SELECT undistribute_table('store', cascade_via_foreign_keys => true)`); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"store", "store_vectors"} {
		if got := citusTableType(t, pool, table); got != "local" {
			t.Fatalf("after undistribute_table, %s is %s", table, got)
		}
	}
	nss := []store.Namespace{{"users", "a"}, {"users", "b"}, {"users", "c"}, {"users", "d"}}
	for _, ns := range nss {
		if err := s.Put(ctx, ns, "k", map[string]any{"text": "apple"}); err != nil {
			t.Fatal(err)
		}
	}

	for range 2 { // the second Setup finds everything done
		again, err := pgstore.New(pool, opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := again.Setup(ctx); err != nil {
			t.Fatalf("Setup of an existing local database: %v", err)
		}
		for _, table := range []string{"store", "store_vectors"} {
			if got := citusTableType(t, pool, table); got != "distributed by prefix" {
				t.Fatalf("%s is %s after Setup, want distributed by prefix", table, got)
			}
		}
		var colocated int
		if err := pool.QueryRow(ctx, `SELECT count(DISTINCT colocation_id) FROM citus_tables WHERE table_name IN (to_regclass('store'), to_regclass('store_vectors'))`).Scan(&colocated); err != nil {
			t.Fatal(err)
		}
		if colocated != 1 {
			t.Fatalf("store and store_vectors in %d colocation groups, want 1", colocated)
		}
		for _, ns := range nss {
			if it, err := again.Get(ctx, ns, "k"); err != nil || it == nil {
				t.Fatalf("Get(%v) after distribution = %v, %v", ns, it, err)
			}
		}
		res, err := again.Search(ctx, store.Namespace{"users"}, store.SearchOptions{Query: "apple", Limit: 10})
		if err != nil || len(res) != len(nss) {
			t.Fatalf("Search after distribution: %d results, %v; want %d", len(res), err, len(nss))
		}
		again.Close()
	}
}

// TestMaintenanceCitus runs the store's maintenance on a Citus
// coordinator: the re-encryption suite, the embedder guard, and a
// re-embedding of vectors spread over the shards.
func TestMaintenanceCitus(t *testing.T) {
	t.Run("Reencrypt", func(t *testing.T) {
		pool, _ := pgtest.CitusSchema(t)
		storetest.RunReencrypt(t, func(t *testing.T, s serde.Serializer) store.Store {
			st, err := pgstore.New(pool, pgstore.Options{Serde: s})
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Setup(context.Background()); err != nil {
				t.Fatal(err)
			}
			return st
		})
	})
	t.Run("EmbedderGuard", func(t *testing.T) {
		pool, _ := pgtest.CitusSchema(t)
		storetest.RunEmbedderGuard(t, func(t *testing.T, idx *store.IndexConfig) (store.Store, error) {
			st, err := pgstore.New(pool, pgstore.Options{Index: idx})
			if err != nil {
				return nil, err
			}
			if err := st.Setup(context.Background()); err != nil {
				st.Close()
				return nil, err
			}
			return st, nil
		})
	})
	t.Run("Reembed", func(t *testing.T) {
		ctx := t.Context()
		pool, _ := pgtest.CitusSchema(t)
		open := func(e embeddings.Embedder) *pgstore.Store {
			st, err := pgstore.New(pool, pgstore.Options{Index: &store.IndexConfig{Embedder: e}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			if err := st.Setup(ctx); err != nil {
				t.Fatalf("Setup with %s: %v", e.Name(), err)
			}
			return st
		}
		s := open(storetest.NewAxisEmbedder("apple", "banana"))
		for i := range 8 {
			if err := s.Put(ctx, store.Namespace{"users", fmt.Sprint(i)}, "k", map[string]any{"text": "apple"}); err != nil {
				t.Fatal(err)
			}
		}
		// The same size, the axes swapped: under the new embedder
		// "apple" lies on the first axis's place of "banana".
		swapped := storetest.Renamed(storetest.NewAxisEmbedder("banana", "apple"), "swapped")
		n, err := s.Reembed(ctx, swapped, store.ReembedOptions{BatchSize: 3})
		if err != nil || n != 8 {
			t.Fatalf("Reembed = %d, %v; want 8", n, err)
		}
		res, err := open(swapped).Search(ctx, store.Namespace{"users"}, store.SearchOptions{Query: "apple", Limit: 10})
		if err != nil || len(res) != 8 {
			t.Fatalf("Search after Reembed: %d results, %v; want 8", len(res), err)
		}
		for _, r := range res {
			if r.Score == nil || *r.Score < 0.99 {
				t.Fatalf("Search after Reembed: %v scores %v, want 1 (the vectors were not re-embedded)", r.Namespace, r.Score)
			}
		}
	})
}

// TestSetupWithoutIndexCitus: a Setup with no index configured on a Citus
// coordinator distributes store alone when nothing else exists, and
// store_vectors with it, colocated, when an earlier Setup with an index
// left one — whether the tables are local (from before Citus) or
// distributed already. Items written before stay readable.
func TestSetupWithoutIndexCitus(t *testing.T) {
	ctx := t.Context()
	indexed := pgstore.Options{Index: &store.IndexConfig{Embedder: storetest.NewAxisEmbedder("apple", "banana")}}
	setup := func(t *testing.T, pool *pgxpool.Pool, opts pgstore.Options) *pgstore.Store {
		t.Helper()
		s, err := pgstore.New(pool, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if err := s.Setup(ctx); err != nil {
			t.Fatalf("Setup (index %v): %v", opts.Index != nil, err)
		}
		return s
	}
	t.Run("fresh", func(t *testing.T) {
		pool, _ := pgtest.CitusSchema(t)
		setup(t, pool, pgstore.Options{})
		if got := citusTableType(t, pool, "store"); got != "distributed by prefix" {
			t.Errorf("store is %s, want distributed by prefix", got)
		}
		var vectors *string
		if err := pool.QueryRow(ctx, `SELECT to_regclass('store_vectors')::text`).Scan(&vectors); err != nil || vectors != nil {
			t.Errorf("store_vectors: %v, %v; want none", vectors, err)
		}
	})
	for _, local := range []bool{true, false} {
		t.Run(fmt.Sprintf("vectors left, local %v", local), func(t *testing.T) {
			pool, _ := pgtest.CitusSchema(t)
			s := setup(t, pool, indexed)
			if local {
				if _, err := pool.Exec(ctx, `SELECT undistribute_table('store', cascade_via_foreign_keys => true)`); err != nil {
					t.Fatal(err)
				}
			}
			ns := store.Namespace{"users", "a"}
			if err := s.Put(ctx, ns, "k", map[string]any{"text": "apple"}); err != nil {
				t.Fatal(err)
			}
			plain := setup(t, pool, pgstore.Options{})
			for _, table := range []string{"store", "store_vectors"} {
				if got := citusTableType(t, pool, table); got != "distributed by prefix" {
					t.Errorf("%s is %s after a Setup without index, want distributed by prefix", table, got)
				}
			}
			var groups int
			if err := pool.QueryRow(ctx, `SELECT count(DISTINCT colocation_id) FROM citus_tables WHERE table_name IN (to_regclass('store'), to_regclass('store_vectors'))`).Scan(&groups); err != nil || groups != 1 {
				t.Errorf("store and store_vectors in %d colocation groups (%v), want 1", groups, err)
			}
			if it, err := plain.Get(ctx, ns, "k"); err != nil || it == nil {
				t.Errorf("Get after the Setup without index = %v, %v", it, err)
			}
			if err := plain.Put(ctx, ns, "k2", map[string]any{"text": "banana"}); err != nil {
				t.Errorf("Put without index after it: %v", err)
			}
		})
	}
}
