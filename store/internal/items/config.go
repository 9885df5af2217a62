package items

import (
	"fmt"
	"slices"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/internal/indexing"
)

// NewConfig checks a store's index and TTL options and returns the
// store's Config, holding copies of them (so a caller's later changes do
// not reach the store): an index has an embedder, dimensions that agree
// with it (0 takes the embedder's), valid field paths ("$" when none) and a
// known distance (cosine when empty); a default TTL is not negative.
func NewConfig(driver string, index *store.IndexConfig, ttl *store.TTLConfig) (Config, error) {
	c := Config{Driver: driver}
	if index != nil {
		idx, err := resolveIndex(*index)
		if err != nil {
			return Config{}, fmt.Errorf("%s: %w", driver, err)
		}
		c.Index = &idx
	}
	if ttl != nil {
		t := *ttl
		if t.DefaultTTL < 0 {
			return Config{}, fmt.Errorf("%s: %w: negative default TTL", driver, store.ErrInvalidArgument)
		}
		c.TTL = &t
	}
	return c, nil
}

func resolveIndex(idx store.IndexConfig) (store.IndexConfig, error) {
	if idx.Embedder == nil {
		return idx, fmt.Errorf("%w: index without embedder", store.ErrInvalidArgument)
	}
	if idx.Dims == 0 {
		idx.Dims = idx.Embedder.Dims()
	}
	if idx.Dims <= 0 || idx.Dims != idx.Embedder.Dims() {
		return idx, fmt.Errorf("%w: index dims %d, embedder %q makes %d",
			store.ErrInvalidArgument, idx.Dims, idx.Embedder.Name(), idx.Embedder.Dims())
	}
	if idx.Fields == nil {
		idx.Fields = []string{"$"}
	} else {
		idx.Fields = slices.Clone(idx.Fields)
	}
	if err := indexing.ValidatePaths(idx.Fields); err != nil {
		return idx, err
	}
	if err := indexing.ValidateDistance(idx.Distance); err != nil {
		return idx, err
	}
	if idx.Distance == "" {
		idx.Distance = store.Cosine
	}
	return idx, nil
}
