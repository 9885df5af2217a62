package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/memvault/memvault/embeddings"
)

// ErrEmbedderMismatch is returned when a store's vectors were made by
// another embedder (model or dimensions) than the one it is opened with:
// comparing vectors of two models gives meaningless scores.
var ErrEmbedderMismatch = errors.New("store: stored vectors were made by another embedder")

// CheckEmbedder compares the embedder name recorded with a store's vectors
// with the configured one. An empty recorded name (a store whose vectors
// predate the record, or were written by LangGraph) is accepted.
func CheckEmbedder(recorded, configured string) error {
	if recorded == "" || recorded == configured {
		return nil
	}
	return fmt.Errorf("%w: vectors by %q, configured %q (re-embed the items or use the same model)", ErrEmbedderMismatch, recorded, configured)
}

// EmbedDocuments embeds texts in one call and checks what came back: one
// vector per text, each of dims values. Every store embeds the fields of a
// whole batch of puts this way.
func EmbedDocuments(ctx context.Context, e embeddings.Embedder, dims int, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	vecs, err := e.EmbedDocuments(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed documents: %w", err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("embed documents: %w: %d texts, %d vectors", embeddings.ErrCountMismatch, len(texts), len(vecs))
	}
	for _, v := range vecs {
		if err := checkDims(v, dims); err != nil {
			return nil, fmt.Errorf("embed documents: %w", err)
		}
	}
	return vecs, nil
}

// EmbedQuery embeds a search query and checks its length.
func EmbedQuery(ctx context.Context, e embeddings.Embedder, dims int, q string) ([]float32, error) {
	v, err := e.EmbedQuery(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("embed query: %w", err)
	}
	if err := checkDims(v, dims); err != nil {
		return nil, fmt.Errorf("embed query: %w", err)
	}
	return v, nil
}

func checkDims(v []float32, dims int) error {
	if len(v) != dims {
		return fmt.Errorf("%w: got %d, want %d", embeddings.ErrDimensionMismatch, len(v), dims)
	}
	return nil
}
