package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"unicode"

	"github.com/memvault/memvault/embeddings"
)

// AxisEmbedder is a deterministic test embedder whose vectors can be
// computed by hand: word i of its vocabulary is axis i, and a text's vector
// counts how often each vocabulary word occurs in it (case-insensitive,
// words split at anything but letters and digits; other words are
// ignored).
type AxisEmbedder struct {
	words     []string
	docCalls  atomic.Int64
	docTexts  atomic.Int64
	queryCall atomic.Int64
}

var _ embeddings.Embedder = (*AxisEmbedder)(nil)

// NewAxisEmbedder returns an embedder over the vocabulary words.
func NewAxisEmbedder(words ...string) *AxisEmbedder {
	return &AxisEmbedder{words: words}
}

// Vector returns the vector of text.
func (e *AxisEmbedder) Vector(text string) []float32 {
	v := make([]float32, len(e.words))
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		for i, word := range e.words {
			if w == word {
				v[i]++
			}
		}
	}
	return v
}

// EmbedDocuments implements embeddings.Embedder.
func (e *AxisEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e.docCalls.Add(1)
	e.docTexts.Add(int64(len(texts)))
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = e.Vector(t)
	}
	return out, nil
}

// EmbedQuery implements embeddings.Embedder.
func (e *AxisEmbedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e.queryCall.Add(1)
	return e.Vector(text), nil
}

// Dims implements embeddings.Embedder.
func (e *AxisEmbedder) Dims() int { return len(e.words) }

// Name implements embeddings.Embedder.
func (e *AxisEmbedder) Name() string { return fmt.Sprintf("axis:%d", len(e.words)) }

// DocumentTexts is how many texts EmbedDocuments has embedded.
func (e *AxisEmbedder) DocumentTexts() int64 { return e.docTexts.Load() }
