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

// ErrNonFinite reports a vector holding NaN or an infinity: it would score
// NaN against every query (which breaks ranking and cannot be encoded as
// JSON), so stores refuse it.
var ErrNonFinite = errors.New("embeddings: vector holds NaN or an infinity")
