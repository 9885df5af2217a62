package recall_test

import (
	"testing"

	"github.com/memvault/memvault/adapters/shared/recall"
	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/embeddings/openai"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/cache"
	"github.com/memvault/memvault/store/memstore"
)

// renamed is an embedder memvault does not know (a caller's own model).
type renamed struct{ embeddings.Embedder }

func (renamed) Name() string { return "my-model:64" }

// TestMinScorePerEmbedder: the threshold follows the store's embedder —
// hashing (public or keyed), an OpenAI-compatible model (plain or sealed),
// through a cache too — and is not known (rank) for another embedder or a
// store without an index.
func TestMinScorePerEmbedder(t *testing.T) {
	keyed, err := embeddings.NewKeyedHashing(64, make([]byte, embeddings.HashingKeySize), "k1")
	if err != nil {
		t.Fatal(err)
	}
	local, err := openai.New(openai.Options{BaseURL: "http://127.0.0.1:9/v1", Model: "nomic-embed-text", Dimensions: 64})
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := embeddings.NewSealed(local, make([]byte, embeddings.SealKeySize), "k1")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		e    embeddings.Embedder
		want float64
		ok   bool
	}{
		{"hashing", embeddings.NewUnkeyedHashing(64), recall.HashingMinScore, true},
		{"keyed hashing", keyed, recall.HashingMinScore, true},
		{"openai-compatible", local, recall.NeuralMinScore, true},
		{"sealed openai-compatible", sealed, recall.NeuralMinScore, true},
		{"unknown", renamed{embeddings.NewUnkeyedHashing(64)}, 0, false},
		{"no index", nil, 0, false},
	} {
		var idx *store.IndexConfig
		if c.e != nil {
			idx = &store.IndexConfig{Embedder: c.e}
		}
		st, err := memstore.New(memstore.Options{Index: idx})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		cached, err := cache.New(st, cache.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []store.Store{st, cached} {
			if got, ok := recall.MinScore(s); got != c.want || ok != c.ok {
				t.Errorf("%s: %v, %v; want %v, %v", c.name, got, ok, c.want, c.ok)
			}
		}
	}
}
