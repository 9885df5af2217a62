package sqlitestore

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/engine"
)

// FuzzDecodeValue feeds arbitrary value columns to the plain and the
// encrypting decoder: they return an object or an error, never panic, and a
// plain object round-trips.
func FuzzDecodeValue(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"a": 1}`, `{"t": "json", "d": "e30="}`, `{"t": "json+mvgcm", "d": "AAAA"}`,
		`{"t": "", "d": ""}`, `{"t": 1, "d": 2}`, `[]`, `null`, `"x"`, `{"a": 1e400}`,
		`{"t": "json", "d": "!!"}`, `{"t":"bytes","d":"AA=="}`, "{\"a\": \"\x00\"}", ``,
	} {
		f.Add([]byte(seed))
	}
	ps := openStore(f, ":memory:", Options{})
	defer ps.Close()
	encSerde := encrypted(f, serde.WithDangerousPlaintextReads())
	es := openStore(f, ":memory:", Options{Serde: encSerde})
	defer es.Close()
	plain, enc := engine.Decoder(ps.Engine), engine.Decoder(es.Engine)
	f.Fuzz(func(t *testing.T, raw []byte) {
		if v, err := plain(context.Background(), "ns", "k", raw); err == nil {
			if v == nil {
				t.Fatal("nil object without error")
			}
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("decoded value does not marshal: %v", err)
			}
			if _, err := plain(context.Background(), "ns", "k", b); err != nil {
				t.Fatalf("round trip: %v", err)
			}
		}
		if v, err := enc(context.Background(), "ns", "k", raw); err == nil && v == nil {
			t.Fatal("nil object without error")
		}
	})
}

// FuzzDecodeVector checks the embedding column decoder against the encoder.
func FuzzDecodeVector(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 128, 63})
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, ok := decodeVector(nil, b)
		if ok != (len(b)%4 == 0) {
			t.Fatalf("ok = %v for %d bytes", ok, len(b))
		}
		if ok && string(encodeVector(v)) != string(b) {
			t.Fatal("decode/encode does not round-trip")
		}
	})
}

// FuzzStoredRow stores arbitrary bytes in the value and embedding columns
// of a row and reads it back through Get and Search: errors are fine,
// panics are not.
func FuzzStoredRow(f *testing.F) {
	f.Add([]byte(`{"a": 1}`), []byte{0, 0, 128, 63, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte(`{"t": "json", "d": "e30="}`), []byte{1})
	f.Add([]byte(`not json`), []byte{})
	ctx := context.Background()
	s := openStore(f, ":memory:", Options{Index: &store.IndexConfig{Embedder: fixedEmbedder{}}})
	f.Cleanup(func() { s.Close() })
	f.Fuzz(func(t *testing.T, value, emb []byte) {
		w := s.db.Writer()
		if _, err := w.Exec(`DELETE FROM store`); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Exec(`INSERT INTO store VALUES ('n', 'k', ?, 0, 0, NULL, NULL)`, string(value)); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Exec(`INSERT INTO store_vectors VALUES ('n', 'k', 'f', ?, 0, 0)`, emb); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Exec(`UPDATE store_generation SET gen = gen + 1`); err != nil {
			t.Fatal(err)
		}
		_, _ = s.Get(ctx, store.Namespace{"n"}, "k")
		_, _ = s.Search(ctx, store.Namespace{"n"}, store.SearchOptions{Query: "q"})
		_, _ = s.Search(ctx, nil, store.SearchOptions{Filter: map[string]any{"a": 1}})
	})
}

// fixedEmbedder embeds everything as the same 4-dim vector.
type fixedEmbedder struct{}

func (fixedEmbedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 0, 0, 0}
	}
	return out, nil
}
func (fixedEmbedder) EmbedQuery(context.Context, string) ([]float32, error) {
	return []float32{1, 0, 0, 0}, nil
}
func (fixedEmbedder) Dims() int    { return 4 }
func (fixedEmbedder) Name() string { return "fixed:4" }
