package embeddings

import "context"

// Embedder turns texts into vectors. Implementations are safe for concurrent
// use.
type Embedder interface {
	// EmbedDocuments embeds texts for storage; the result has one vector per
	// input, in input order, each of length Dims().
	EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error)
	// EmbedQuery embeds a search query.
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
	// Dims is the length of every vector this embedder returns.
	Dims() int
	// Name identifies the model and its dimensions (for example
	// "openai:text-embedding-3-small:1536" or "hash:256"); caches key on it
	// and stores refuse vectors made by another name.
	Name() string
}
