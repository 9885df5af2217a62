package embeddings

import "errors"

// ErrDimensionMismatch reports a vector whose length differs from the
// embedder's Dims.
var ErrDimensionMismatch = errors.New("embeddings: vector has wrong dimensions")

// ErrCountMismatch reports an embedder that returned a different number of
// vectors than it was given texts.
var ErrCountMismatch = errors.New("embeddings: wrong number of vectors")

// ErrInvalidCacheSize reports a non-positive cache size passed to NewCached.
var ErrInvalidCacheSize = errors.New("embeddings: cache size must be positive")
