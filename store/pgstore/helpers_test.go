package pgstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
)

// newSealed returns serde's strict encrypted serializer (JSONPlus inside,
// memvault's envelope cipher, associated data honoured) under a fixed key.
func newSealed(t testing.TB) *serde.Encrypted {
	t.Helper()
	k, err := crypto.NewKey([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	ring, err := crypto.NewKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := serde.NewEncrypted(nil, ring)
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

// tableEmbedder embeds each known text as its listed vector; unknown texts
// are an error, so a test sees exactly what was embedded.
type tableEmbedder struct {
	dims    int
	vectors map[string][]float32
}

func (e *tableEmbedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v, ok := e.vectors[t]
		if !ok {
			return nil, fmt.Errorf("tableEmbedder: no vector for %q", t)
		}
		out[i] = v
	}
	return out, nil
}

func (e *tableEmbedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	v, err := e.EmbedDocuments(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	return v[0], nil
}

func (e *tableEmbedder) Dims() int    { return e.dims }
func (e *tableEmbedder) Name() string { return fmt.Sprintf("table:%d", e.dims) }

// count runs a COUNT(*) query.
func count(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func keysOf(items []store.SearchItem) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Namespace.String() + "/" + it.Key
	}
	return out
}
