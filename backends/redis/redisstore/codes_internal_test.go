package redisstore

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/vecindex"
)

// TestCodesAreOfStoredVectors: under per-subject keys, the code kept
// beside each stored vector is the code of that stored vector (rotated
// into its subject's space), byte for byte, and not the code of the
// embedder's plaintext vector: codes tell nothing the stored vectors do
// not, and go with the item.
func TestCodesAreOfStoredVectors(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Shared(t, 7).Client(t)
	emb := embeddings.NewUnkeyedHashing(64)
	s, err := New(ctx, rdb, Options{Prefix: redistest.Prefix(), Serde: testkeys.Subjects(t),
		Index: &store.IndexConfig{Embedder: emb, Fields: []string{"text"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	texts := map[store.RowKey]string{}
	for i := range 12 {
		ns := store.Namespace{"users", fmt.Sprintf("u%d", i%3)}
		k := store.RowKey{NS: ns.String(), Key: fmt.Sprint("k", i)}
		texts[k] = fmt.Sprintf("apple banana %d", i)
		if err := s.Put(ctx, ns, k.Key, map[string]any{"text": texts[k]}); err != nil {
			t.Fatal(err)
		}
	}
	for k, text := range texts {
		f, err := rdb.HMGet(ctx, s.d.k.items+rowID(k), "x", "q", "f").Result()
		if err != nil || f[0] == nil || f[1] == nil || f[2] == nil {
			t.Fatalf("%v: fields %v, %v", k, f, err)
		}
		vs, err := decodeVectors([]byte(f[0].(string)))
		if err != nil || len(vs) != 1 {
			t.Fatalf("%v: vectors %v, %v", k, vs, err)
		}
		var qs, fs []string
		eachEntry(f[1].(string), func(e string) { qs = append(qs, e) })
		eachEntry(f[2].(string), func(e string) { fs = append(fs, e) })
		if len(qs) != 1 || len(fs) != 1 {
			t.Fatalf("%v: %d codes, %d fine parts", k, len(qs), len(fs))
		}
		code := vecindex.JoinCode(nil, []byte(qs[0]), []byte(fs[0]))
		if want := vecindex.EncodeCode(vs[0].Vec, nil); !bytes.Equal(code, want) {
			t.Fatalf("%v: the stored code is not the stored vector's", k)
		}
		if plain := vecindex.EncodeCode(emb.Embed(text), nil); bytes.Equal(code, plain) {
			t.Fatalf("%v: the stored code is the plaintext vector's", k)
		}
	}
	if _, err := s.DeletePrefix(ctx, store.Namespace{"users", "u1"}); err != nil {
		t.Fatal(err)
	}
	for k := range texts {
		n, err := rdb.Exists(ctx, s.d.k.items+rowID(k)).Result()
		if err != nil {
			t.Fatal(err)
		}
		if gone := k.NS == "users.u1"; gone != (n == 0) {
			t.Fatalf("%v: hash exists %d after deleting users.u1", k, n)
		}
	}
}
