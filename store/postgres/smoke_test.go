package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/postgres"
)

func TestSmoke(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t, postgres.Options{
		Index: &store.IndexConfig{Embedder: embeddings.NewHashing(64)},
		TTL:   &store.TTLConfig{SweepInterval: -1},
	})
	ns := store.Namespace{"users", "u1"}
	for i, txt := range []string{"I like apples", "dogs are great", "the sea is blue"} {
		if err := s.Put(ctx, ns, string(rune('a'+i)), map[string]any{"text": txt, "n": i}, store.WithTTL(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	it, err := s.Get(ctx, ns, "a")
	if err != nil || it == nil {
		t.Fatal(it, err)
	}
	t.Logf("%+v", it)
	res, err := s.Search(ctx, store.Namespace{"users"}, store.SearchOptions{Query: "apples"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		t.Logf("%s %v %v", r.Key, *r.Score, r.Value)
	}
	res, err = s.Search(ctx, nil, store.SearchOptions{Filter: map[string]any{"n": map[string]any{"$gte": 1}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(len(res))
	nss, err := s.ListNamespaces(ctx, store.ListNamespacesOptions{Prefix: store.Namespace{"users"}})
	t.Log(nss, err)
}
