package indexing

import (
	"fmt"
	"math"

	"github.com/memvault/memvault/embeddings"
)

// checkDims checks a vector an embedder made: dims values, each finite.
func checkDims(v []float32, dims int) error {
	if len(v) != dims {
		return fmt.Errorf("%w: got %d, want %d", embeddings.ErrDimensionMismatch, len(v), dims)
	}
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("%w: component %d is %v", embeddings.ErrNonFinite, i, x)
		}
	}
	return nil
}
