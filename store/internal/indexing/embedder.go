package indexing

import (
	"context"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/memvault/memvault/store"

	"github.com/memvault/memvault/embeddings"
)

// CheckEmbedder compares the embedder recorded with a store's vectors —
// its name and the size of its vectors, recordedDims (0: not known) — with
// the configured one, named configured, making vectors of dims values. An
// empty recorded name (a store whose vectors predate the record, or were
// written by LangGraph) is accepted when the sizes agree. Names carry the
// key of keyed and sealed embedders ("hash:256+keyed:<key id>",
// "<model>+sealed:<key id>"), so vectors made under one key are refused
// under another; the size catches an embedder that keeps a model's name at
// another size (a custom embedder, a model with a dimensions option): its
// searches would find nothing and its vectors would not mix.
func CheckEmbedder(recorded string, recordedDims int, configured string, dims int) error {
	if (recorded == "" || recorded == configured) && (recordedDims == 0 || recordedDims == dims) {
		return nil
	}
	return &store.EmbedderMismatchError{Recorded: recorded, Configured: configured, RecordedDims: recordedDims, ConfiguredDims: dims}
}

// MaxIndexedTextBytes is how much of one field's text a store embeds: the
// first 32 KiB, cut at a character boundary. The whole value is stored and
// returned; only what search sees is bounded. It keeps the cost of a put
// bounded whatever its size (an embedder's memory and time grow with the
// text, and a 16 MB value took gigabytes), and is about what OpenAI's
// embedding models accept (8 191 tokens); the meaning of a memory is in its
// first pages, and a longer document should be split into items.
const MaxIndexedTextBytes = 32 << 10

// IndexedText is the part of text a store embeds (see MaxIndexedTextBytes).
func IndexedText(text string) string {
	if len(text) <= MaxIndexedTextBytes {
		return text
	}
	cut := MaxIndexedTextBytes
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut]
}

// EmbedDocuments embeds texts in one call and checks what came back: one
// vector per text, each of dims values. Every store embeds the fields of a
// whole batch of puts this way, each text cut to MaxIndexedTextBytes.
func EmbedDocuments(ctx context.Context, e embeddings.Embedder, dims int, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("embed documents: %w", err)
	}
	cut := texts
	for i, t := range texts {
		if len(t) > MaxIndexedTextBytes {
			if &cut[0] == &texts[0] {
				cut = slices.Clone(texts) // the caller's slice stays as it is
			}
			cut[i] = IndexedText(t)
		}
	}
	texts = cut
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

// EmbedQuery embeds a search query, cut to MaxIndexedTextBytes, and checks
// its length.
func EmbedQuery(ctx context.Context, e embeddings.Embedder, dims int, q string) ([]float32, error) {
	v, err := e.EmbedQuery(ctx, IndexedText(q))
	if err != nil {
		return nil, fmt.Errorf("embed query: %w", err)
	}
	if err := checkDims(v, dims); err != nil {
		return nil, fmt.Errorf("embed query: %w", err)
	}
	return v, nil
}

// ReembedTexts returns the text a stored vector named field was made from:
// the field of that name among the texts of value under paths (the
// configured index fields), else field read as a path of its own (a put's
// WithIndex). ok is false when the value no longer yields it.
func ReembedTexts(value map[string]any, paths []string, field string) (text string, ok bool) {
	if texts, err := ExtractTexts(value, paths); err == nil {
		for _, t := range texts {
			if t.Field == field {
				return t.Text, true
			}
		}
	}
	if texts, err := ExtractTexts(value, []string{field}); err == nil && len(texts) == 1 && texts[0].Field == field {
		return texts[0].Text, true
	}
	return "", false
}

// CheckReembedTarget refuses an embedder whose vectors could not replace
// the stored ones (another size).
func CheckReembedTarget(to embeddings.Embedder, dims int) error {
	if to == nil {
		return fmt.Errorf("%w: re-embed: no embedder", store.ErrInvalidArgument)
	}
	if to.Dims() != dims {
		return fmt.Errorf("re-embed: %w: %s makes %d dimensions, the store holds %d", embeddings.ErrDimensionMismatch, to.Name(), to.Dims(), dims)
	}
	return nil
}
