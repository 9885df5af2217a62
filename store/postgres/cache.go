package postgres

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/store/internal/indexing"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/memvault/memvault/jsonvalue"
)

// valueCache keeps decrypted values keyed by item, validated by the exact
// stored bytes: a hit needs the row to be unchanged, so the cache is never
// stale, even with other processes writing; it only saves decryption and
// decoding.
type valueCache struct {
	c *lru.Cache[itemKey, cachedValue]
}

type itemKey struct{ prefix, key string }

type cachedValue struct {
	raw   string
	value map[string]any
}

func newValueCache(n int) *valueCache {
	c, _ := lru.New[itemKey, cachedValue](n) // n > 0
	return &valueCache{c: c}
}

func (c *valueCache) get(prefix, key string, raw []byte) (map[string]any, bool) {
	e, ok := c.c.Get(itemKey{prefix, key})
	if !ok || e.raw != string(raw) {
		return nil, false
	}
	return copyValue(e.value), true
}

// maxCachedValue is the largest stored value the cache keeps.
const maxCachedValue = 64 << 10

func (c *valueCache) add(prefix, key string, raw []byte, v map[string]any) {
	if len(raw) > maxCachedValue {
		return
	}
	c.c.Add(itemKey{prefix, key}, cachedValue{raw: string(raw), value: copyValue(v)})
}

// embedQuery embeds a search query, through the query cache when on.
func (s *Store) embedQuery(ctx context.Context, q string) ([]float32, error) {
	e := s.embedder()
	if s.query != nil {
		e = s.query
	}
	v, err := indexing.EmbedQuery(ctx, e, s.index.dims, q)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return v, nil
}

// copyValue deep-copies a decoded value, so callers cannot change the
// cached one.
func copyValue(m map[string]any) map[string]any {
	return jsonvalue.Copy(m).(map[string]any)
}
