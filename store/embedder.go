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

// EmbedderMismatchError is the error CheckEmbedder returns: it matches
// ErrEmbedderMismatch and names both embedders, so a caller can tell, say,
// vectors of the public (unkeyed) embedder from vectors of another model,
// and both sizes when they differ: an embedder with the recorded name but
// another number of dimensions is refused too, since none of its query
// vectors could be compared with a stored one.
type EmbedderMismatchError struct {
	// Recorded made the stored vectors; Configured is the one offered.
	Recorded, Configured string
	// RecordedDims and ConfiguredDims are the sizes of their vectors (0:
	// not known — a store whose record predates sizes and holds no vector).
	RecordedDims, ConfiguredDims int
}

// Error names both embedders, and both sizes when they differ.
func (e *EmbedderMismatchError) Error() string {
	if e.RecordedDims != 0 && e.RecordedDims != e.ConfiguredDims {
		return fmt.Sprintf("%v: vectors of %d dimensions by %q, configured %q makes %d dimensions (re-embed the items, or use the embedder that made them)", ErrEmbedderMismatch, e.RecordedDims, e.Recorded, e.Configured, e.ConfiguredDims)
	}
	return fmt.Sprintf("%v: vectors by %q, configured %q (re-embed the items, or use the embedder and key that made them)", ErrEmbedderMismatch, e.Recorded, e.Configured)
}

// Is makes errors.Is(err, ErrEmbedderMismatch) true.
func (e *EmbedderMismatchError) Is(target error) bool { return target == ErrEmbedderMismatch }

// ReembedOptions configures a re-embedding run (Reembedder).
type ReembedOptions struct {
	// BatchSize is how many vectors are re-embedded per embedding call and
	// transaction; 0 means 256.
	BatchSize int
	// Progress, when set, is called after each batch with the vectors
	// done so far and the total.
	Progress func(done, total int64)
}

// Reembedder is implemented by stores that can recompute their stored
// vectors with another embedder of the same size — the same model keyed or
// sealed under another key, say — and then record it as the one that made
// them. Each batch commits on its own, so a run that stops half way can
// simply be run again (every vector it redoes comes out the same); until a
// run finishes, the store holds vectors of both embedders and searches mix
// them. Reopen the store with the new embedder afterwards.
type Reembedder interface {
	Reembed(ctx context.Context, to embeddings.Embedder, opt ReembedOptions) (vectors int64, err error)
}

// EmbedderNamer is implemented by stores that can say which embedder makes
// the vectors of their semantic index, so that a caller can judge scores:
// what counts as close differs by model (the offline hashing embedder
// scores a sentence that shares one word with the query near 0.1–0.3, a
// neural model one that means the same near 0.5–0.8). Every memvault store
// implements it, and so does every decorator of one (store/cache, the
// audited store), by asking the store it wraps: a decorator never hides
// its inner store's answer nor makes one up.
type EmbedderNamer interface {
	// EmbedderName returns the Name of the index's embedder (for example
	// "hash:256", "hash:256+keyed:<key id>" or
	// "openai:<model>:<dims>+sealed:<key id>"), and false when the store
	// has no semantic index or cannot tell (a decorator over a store that
	// does not implement EmbedderNamer).
	EmbedderName() (name string, ok bool)
}

// EmbedderNameOf returns st's embedder name when st is an EmbedderNamer
// that knows it, and false otherwise.
func EmbedderNameOf(st Store) (string, bool) {
	n, ok := st.(EmbedderNamer)
	if !ok {
		return "", false
	}
	return n.EmbedderName()
}
