package embeddings_test

import (
	"context"
	"fmt"
	"math"

	"github.com/memvault/memvault/embeddings"
)

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0 // the zero vector of an empty text is similar to nothing
	}
	return dot / math.Sqrt(na*nb)
}

func ExampleHashing() {
	ctx := context.Background()
	h := embeddings.NewUnkeyedHashing(256)

	docs, err := h.EmbedDocuments(ctx, []string{
		"The user prefers dark mode in the editor.",
		"The billing service deploys on Fridays.",
	})
	if err != nil {
		panic(err)
	}
	q, err := h.EmbedQuery(ctx, "Which editor mode does the user prefer?")
	if err != nil {
		panic(err)
	}
	fmt.Println(h.Name(), len(q))
	fmt.Printf("editor: %.2f\n", cosine(q, docs[0]))
	fmt.Printf("billing: %.2f\n", cosine(q, docs[1]))
	// Output:
	// hash:256 256
	// editor: 0.80
	// billing: 0.02
}

func ExampleCached() {
	ctx := context.Background()
	c, err := embeddings.NewCached(embeddings.NewUnkeyedHashing(64), 1000)
	if err != nil {
		panic(err)
	}
	if _, err := c.EmbedDocuments(ctx, []string{"alpha", "beta"}); err != nil {
		panic(err)
	}
	// "alpha" is a hit; "gamma" is embedded once although it appears twice.
	if _, err := c.EmbedDocuments(ctx, []string{"alpha", "gamma", "gamma"}); err != nil {
		panic(err)
	}
	fmt.Printf("%+v\n", c.Stats())
	// Output:
	// {Hits:1 Misses:4 Embedded:3 Evictions:0 Len:3}
}
