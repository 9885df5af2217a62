package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
)

// sealed is a serde.BoundSerializer encrypting JSON with crypto's envelope
// cipher; the store only relies on the BoundSerializer contract, which
// serde's encrypted serializer implements the same way.
type sealed struct{ c crypto.Cipher }

func newSealed(t testing.TB) *sealed {
	t.Helper()
	k, err := crypto.NewKey([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	ring, err := crypto.NewKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	env, err := crypto.NewEnvelope(ring)
	if err != nil {
		t.Fatal(err)
	}
	return &sealed{c: env}
}

func (s *sealed) DumpsTyped(v any) (string, []byte, error) { return s.DumpsTypedWith(v, nil) }

func (s *sealed) LoadsTyped(typ string, data []byte) (any, error) {
	return s.LoadsTypedWith(typ, data, nil)
}

func (s *sealed) DumpsTypedWith(v any, aad []byte) (string, []byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", nil, fmt.Errorf("%w: %v", serde.ErrUnsupportedValue, err)
	}
	ct, err := s.c.Encrypt(b, aad)
	if err != nil {
		return "", nil, err
	}
	return serde.TypeJSON + "+" + s.c.Name(), ct, nil
}

func (s *sealed) LoadsTypedWith(typ string, data, aad []byte) (any, error) {
	inner, cipher, ok := strings.Cut(typ, "+")
	if !ok {
		return nil, serde.ErrPlaintextRefused
	}
	if inner != serde.TypeJSON || cipher != s.c.Name() {
		return nil, fmt.Errorf("%w %q", serde.ErrUnknownType, typ)
	}
	pt, err := s.c.Decrypt(data, aad)
	if err != nil {
		if errors.Is(err, crypto.ErrDecrypt) {
			return nil, serde.ErrDecrypt
		}
		return nil, err
	}
	d := json.NewDecoder(strings.NewReader(string(pt)))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: %v", serde.ErrMalformed, err)
	}
	return v, nil
}

var _ serde.BoundSerializer = (*sealed)(nil)

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
