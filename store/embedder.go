package store

import (
	"errors"
	"fmt"
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
