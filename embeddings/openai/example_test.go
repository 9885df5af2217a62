package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/memvault/memvault/embeddings/openai"
)

// fakeEmbeddingsAPI answers POST /v1/embeddings with two-dimensional
// vectors [len(input), index], listed in reverse order as a server may.
func fakeEmbeddingsAPI() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		if r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i := len(req.Input) - 1; i >= 0; i-- {
			data = append(data, item{i, []float32{float32(len(req.Input[i])), float32(i)}})
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
	}))
}

func Example() {
	srv := fakeEmbeddingsAPI() // stands in for OpenAI, vLLM, Ollama, …
	defer srv.Close()

	e, err := openai.New(openai.Options{
		BaseURL:    srv.URL + "/v1",
		Model:      "nomic-embed-text", // a model New does not know: give its size
		Dimensions: 2,
		APIKey:     "sk-example",
	})
	if err != nil {
		panic(err)
	}
	vecs, err := e.EmbedDocuments(context.Background(), []string{"hello", "", "memvault"})
	if err != nil {
		panic(err)
	}
	fmt.Println(e.Name())
	for _, v := range vecs {
		fmt.Println(v)
	}
	// Output:
	// openai:nomic-embed-text:2
	// [5 0]
	// [0 0]
	// [8 1]
}

func ExampleNew() {
	// The zero Options embed with OpenAI's text-embedding-3-small, the key
	// taken from OPENAI_API_KEY; New itself makes no request (and fails at
	// once when OpenAI would get no key).
	e, err := openai.New(openai.Options{Dimensions: 512, APIKey: "sk-example"})
	if err != nil {
		panic(err)
	}
	fmt.Println(e.Name(), e.Dims())
	// Output: openai:text-embedding-3-small:512 512
}
