package storetest

import (
	"context"
	"fmt"
	"math"
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

// poisonEmbedder is an AxisEmbedder whose vector of a text holding
// "poison" has a NaN component and of one holding "overflow" an infinity,
// as a faulty model or endpoint might return.
type poisonEmbedder struct{ *AxisEmbedder }

func (e poisonEmbedder) poison(text string, v []float32) []float32 {
	switch {
	case strings.Contains(text, "poison"):
		v[0] = float32(math.NaN())
	case strings.Contains(text, "overflow"):
		v[0] = float32(math.Inf(1))
	}
	return v
}

// EmbedDocuments implements embeddings.Embedder.
func (e poisonEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := e.AxisEmbedder.EmbedDocuments(ctx, texts)
	for i := range vs {
		vs[i] = e.poison(texts[i], vs[i])
	}
	return vs, err
}

// EmbedQuery implements embeddings.Embedder.
func (e poisonEmbedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	v, err := e.AxisEmbedder.EmbedQuery(ctx, text)
	if v != nil {
		v = e.poison(text, v)
	}
	return v, err
}
