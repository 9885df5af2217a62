package pgstore_test

import (
	"context"
	"testing"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/pgstore"
)

// TestFilterFindsValueWithNUL: an item whose value holds U+0000 somewhere
// (which JSONB cannot hold, so the plaintext store keeps it in an
// envelope) is found by a filter on its other fields, as on every other
// backend; before, the filter's SQL pushdown, which reads JSONB, dropped
// it from every filtered search and listing, with and without a query.
func TestFilterFindsValueWithNUL(t *testing.T) {
	ctx := context.Background()
	for _, indexed := range []bool{false, true} {
		var opts pgstore.Options
		if indexed {
			opts.Index = &store.IndexConfig{Embedder: embeddings.NewUnkeyedHashing(16), Fields: []string{"text"}}
		}
		s, err := pgstore.New(pgtest.Pool(t), opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Setup(ctx); err != nil {
			t.Fatal(err)
		}
		ns := store.Namespace{"nul"}
		if err := s.Put(ctx, ns, "with-nul", map[string]any{"user": "ann", "text": "tea with\x00milk"}); err != nil {
			t.Fatal(err)
		}
		if err := s.Put(ctx, ns, "plain", map[string]any{"user": "ann", "text": "tea"}); err != nil {
			t.Fatal(err)
		}
		if err := s.Put(ctx, ns, "other", map[string]any{"user": "bob", "text": "tea"}); err != nil {
			t.Fatal(err)
		}
		// Another user's envelope row passes the SQL too: the engine's
		// check must still drop it.
		if err := s.Put(ctx, ns, "other-nul", map[string]any{"user": "bob", "text": "tea\x00"}); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"", "tea"} {
			if q != "" && !indexed {
				continue
			}
			for _, f := range []map[string]any{{"user": "ann"}, {"user": map[string]any{"$ne": "bob"}}, {"user": map[string]any{"$gte": "ann", "$lt": "b"}}} {
				got, err := s.Search(ctx, ns, store.SearchOptions{Query: q, Filter: f})
				if err != nil {
					t.Fatal(err)
				}
				keys := map[string]bool{}
				for _, it := range got {
					keys[it.Key] = true
				}
				if len(got) != 2 || !keys["with-nul"] || !keys["plain"] {
					t.Errorf("indexed %v, query %q, filter %v: found %v, want with-nul and plain", indexed, q, f, keys)
				}
			}
		}
		s.Close()
	}
}
