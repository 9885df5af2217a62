package pgstore

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/engine"
)

// SetCopyMin sets how many items a write puts before it goes through COPY,
// so that tests can run small batches (1: every put) through the bulk path.
func SetCopyMin(s *Store, n int) { s.d.copyMin = n }

// ExactSearches reports how many searches of s the index could not settle,
// which were ranked exactly.
func ExactSearches(s *Store) int64 { return engine.ExactSearches(s.Engine) }

// encodeValue is the JSON text the store writes for v at (prefix, key).
func (s *Store) encodeValue(ctx context.Context, prefix, key string, v map[string]any) (string, error) {
	raw, err := engine.EncodeValue(ctx, s.Engine, store.RowKey{NS: prefix, Key: key}, v)
	if err != nil {
		return "", fmt.Errorf("postgres: %w: value of %q: %w", store.ErrInvalidArgument, key, err)
	}
	return s.d.jsonb(raw)
}
