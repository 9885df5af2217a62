package pgstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/pgstore"
	"github.com/memvault/memvault/store/storetest"
)

func TestEmbedderGuard(t *testing.T) {
	pool := pgtest.Pool(t)
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
}

// TestEmbedderRecordWithoutDims: a store whose embedder record predates
// sizes (no dims column), or that has no record at all (set up by
// LangGraph, or by a build before the record), still sets up with the
// embedder that made its vectors and records the size, taken from the
// store_vectors.embedding column; the same name at another size is
// refused, before the record knows the size and after.
func TestEmbedderRecordWithoutDims(t *testing.T) {
	ctx := context.Background()
	idx := func(dims int) *store.IndexConfig {
		return &store.IndexConfig{Embedder: storetest.Renamed(embeddings.NewUnkeyedHashing(dims), "custom-model"), Fields: []string{"text"}}
	}
	// What an older build left: the record without its size column
	// (memvault_vector migration 01 not applied), or no record and no
	// tracking table at all (LangGraph, or a build before the record).
	for name, old := range map[string][]string{
		"no_dims_column": {`ALTER TABLE memvault_store_embedder DROP COLUMN dims`, `DELETE FROM memvault_vector_migrations WHERE v >= 1`},
		"no_record":      {`DROP TABLE memvault_store_embedder`, `DROP TABLE memvault_vector_migrations`},
	} {
		t.Run(name, func(t *testing.T) {
			pool := pgtest.Pool(t)
			setup := func(dims int) (*pgstore.Store, error) {
				st, err := pgstore.New(pool, pgstore.Options{Index: idx(dims)})
				if err != nil {
					return nil, err
				}
				if err := st.Setup(ctx); err != nil {
					st.Close()
					return nil, err
				}
				return st, nil
			}
			st, err := setup(16)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Put(ctx, store.Namespace{"a"}, "k", map[string]any{"text": "hello"}); err != nil {
				t.Fatal(err)
			}
			st.Close()
			for _, stmt := range old {
				if _, err := pool.Exec(ctx, stmt); err != nil {
					t.Fatal(err)
				}
			}
			if st, err := setup(8); !errors.Is(err, store.ErrEmbedderMismatch) {
				if err == nil {
					st.Close()
				}
				t.Fatalf("setup of an old record at 8 dimensions over a vector(16) column: %v, want ErrEmbedderMismatch", err)
			}
			st, err = setup(16)
			if err != nil {
				t.Fatalf("setup of an old record with the embedder that made it: %v", err)
			}
			res, err := st.Search(ctx, store.Namespace{"a"}, store.SearchOptions{Query: "hello"})
			if err != nil || len(res) != 1 {
				t.Fatalf("search after the migration: %v, %v", res, err)
			}
			st.Close()
			var dims *int32
			if err := pool.QueryRow(ctx, `SELECT dims FROM memvault_store_embedder WHERE id = 0`).Scan(&dims); err != nil || dims == nil || *dims != 16 {
				t.Fatalf("recorded size after the migration: %v, %v, want 16", dims, err)
			}
			if st, err := setup(8); !errors.Is(err, store.ErrEmbedderMismatch) {
				if err == nil {
					st.Close()
				}
				t.Fatalf("setup at 8 dimensions after the record learnt 16: %v, want ErrEmbedderMismatch", err)
			}
		})
	}
}
