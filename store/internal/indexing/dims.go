package indexing

import (
	"fmt"

	"github.com/memvault/memvault/embeddings"
)

func checkDims(v []float32, dims int) error {
	if len(v) != dims {
		return fmt.Errorf("%w: got %d, want %d", embeddings.ErrDimensionMismatch, len(v), dims)
	}
	return nil
}
