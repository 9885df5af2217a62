package pgstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/store"
)

// TestDriverVectors: DriverTx.Vectors (which the engine uses when a driver
// does not score itself) hands each item's vectors once, all of them, with
// the item's own updated_at, for vector and halfvec columns.
func TestDriverVectors(t *testing.T) {
	for _, half := range []bool{false, true} {
		t.Run(fmt.Sprint("halfvec=", half), func(t *testing.T) {
			ctx := context.Background()
			s, err := New(pgtest.Pool(t), Options{Index: &store.IndexConfig{Embedder: embeddings.NewUnkeyedHashing(8), Fields: []string{"a", "b"}}, ANN: ANNConfig{HalfVec: half}})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			want := map[string]time.Time{}
			for i := range 3 {
				key := fmt.Sprint("k", i)
				if err := s.Put(ctx, store.Namespace{"n"}, key, map[string]any{"a": "x" + key, "b": "y" + key}); err != nil {
					t.Fatal(err)
				}
				it, err := s.Get(ctx, store.Namespace{"n"}, key)
				if err != nil {
					t.Fatal(err)
				}
				want[key] = it.UpdatedAt
			}
			tx, _ := s.d.Begin(ctx, false)
			defer tx.Rollback() //nolint:errcheck // read-only
			got := map[string]int{}
			err = tx.Vectors(ctx, nil, time.Now(), func(k store.RowKey, updated time.Time, vs []store.Vector) error {
				got[k.Key]++
				if !updated.Equal(want[k.Key]) || len(vs) != 2 || len(vs[0].Vec) != 8 || vs[0].Field == vs[1].Field {
					t.Errorf("%s: updated %v (want %v), %d vectors %+v", k.Key, updated, want[k.Key], len(vs), vs)
				}
				return nil
			})
			if err != nil || len(got) != 3 || got["k0"] != 1 || got["k1"] != 1 || got["k2"] != 1 {
				t.Fatalf("Vectors: %v, items %v", err, got)
			}
		})
	}
}
