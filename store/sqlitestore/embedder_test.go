package sqlitestore_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/sqlitestore"
	"github.com/memvault/memvault/store/storetest"
)

func TestEmbedderGuard(t *testing.T) {
	path := filepath.Join(t.TempDir(), "guard.db")
	storetest.RunEmbedderGuard(t, func(t *testing.T, idx *store.IndexConfig) (store.Store, error) {
		return sqlitestore.Open(context.Background(), path, sqlitestore.Options{Index: idx})
	})
}

// TestEmbedderRecordWithoutDims: a database whose embedder record predates
// sizes (made before v5 of the schema: no dims column) still opens with
// the embedder that made its vectors, takes the size from them and
// records it; the same name at another size is then refused — and is
// refused as well on such a database straight away, before the record
// knows the size, by the size of the stored vectors. So does a database
// without a record (from before v2).
func TestEmbedderRecordWithoutDims(t *testing.T) {
	olds := map[string][]string{
		// A database of schema v4: neither v5's dims nor v6's coverage.
		"no_dims_column": {`ALTER TABLE store_embedder DROP COLUMN dims`, `ALTER TABLE store_vector_quant DROP COLUMN code_items`, `ALTER TABLE store_vector_quant DROP COLUMN code_sum`, `DELETE FROM memvault_migrations WHERE component = 'store' AND v >= 5`},
		"no_record":      {`DELETE FROM store_embedder`},
	}
	for _, firstOpen := range []string{"same", "other_size"} {
		for oldName, old := range olds {
			t.Run(firstOpen+"/"+oldName, func(t *testing.T) { testOldRecord(t, firstOpen, old) })
		}
	}
}

// testOldRecord stores a vector of 16 dimensions, runs old on the file to
// make its record what an older build left, and opens it again (first at
// 8 dimensions when firstOpen says so).
func testOldRecord(t *testing.T, firstOpen string, old []string) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	model := func(dims int) *store.IndexConfig {
		return &store.IndexConfig{Embedder: storetest.Renamed(embeddings.NewUnkeyedHashing(dims), "custom-model"), Fields: []string{"text"}}
	}
	s, err := sqlitestore.Open(ctx, path, sqlitestore.Options{Index: model(16)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, store.Namespace{"a"}, "k", map[string]any{"text": "hello"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// Back to the record of a build before sizes.
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range old {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()

	if firstOpen == "other_size" {
		if s, err := sqlitestore.Open(ctx, path, sqlitestore.Options{Index: model(8)}); !errors.Is(err, store.ErrEmbedderMismatch) {
			if err == nil {
				s.Close()
			}
			t.Fatalf("open of an old record at 8 dimensions over vectors of 16: %v, want ErrEmbedderMismatch", err)
		}
	}
	s, err = sqlitestore.Open(ctx, path, sqlitestore.Options{Index: model(16)})
	if err != nil {
		t.Fatalf("open of an old record with the embedder that made it: %v", err)
	}
	res, err := s.Search(ctx, store.Namespace{"a"}, store.SearchOptions{Query: "hello"})
	if err != nil || len(res) != 1 {
		t.Fatalf("search after the migration: %v, %v", res, err)
	}
	s.Close()
	if s, err := sqlitestore.Open(ctx, path, sqlitestore.Options{Index: model(8)}); !errors.Is(err, store.ErrEmbedderMismatch) {
		if err == nil {
			s.Close()
		}
		t.Fatalf("open at 8 dimensions after the record learnt 16: %v, want ErrEmbedderMismatch", err)
	}
}

// TestEmbedderRecordWithoutDimsEmpty: an old record over a store without
// vectors takes the size of the first embedder that opens it.
func TestEmbedderRecordWithoutDimsEmpty(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "empty.db")
	idx := func(dims int) *store.IndexConfig {
		return &store.IndexConfig{Embedder: storetest.Renamed(embeddings.NewUnkeyedHashing(dims), "custom-model"), Fields: []string{"text"}}
	}
	s, err := sqlitestore.Open(ctx, path, sqlitestore.Options{Index: idx(16)})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, `UPDATE store_embedder SET dims = NULL`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	s, err = sqlitestore.Open(ctx, path, sqlitestore.Options{Index: idx(8)})
	if err != nil {
		t.Fatalf("open of an empty store's old record at another size: %v", err)
	}
	s.Close()
	if s, err := sqlitestore.Open(ctx, path, sqlitestore.Options{Index: idx(16)}); !errors.Is(err, store.ErrEmbedderMismatch) {
		if err == nil {
			s.Close()
		}
		t.Fatalf("open at 16 after the record took 8: %v, want ErrEmbedderMismatch", err)
	}
}
