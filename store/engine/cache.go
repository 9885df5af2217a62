package engine

import (
	"context"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/jsonvalue"
	"github.com/memvault/memvault/store"
)

// valueCache keeps opened values keyed by item, each with the exact stored
// bytes it was opened from: an entry is used only when the row read holds
// those bytes, so it is never stale, even with other processes writing;
// it saves decrypting and decoding unchanged rows of a driver whose values
// come from outside the process (Options.ValueCacheSize).
type valueCache struct {
	c *lru.Cache[store.RowKey, cachedValue]
}

type cachedValue struct {
	raw string
	v   map[string]any
}

// maxCachedValue is the largest stored value the cache keeps.
const maxCachedValue = 64 << 10

func newValueCache(n int) *valueCache {
	if n <= 0 {
		return nil
	}
	c, _ := lru.New[store.RowKey, cachedValue](n) // n > 0
	return &valueCache{c: c}
}

// ItemHasSubject reports whether the engine seals the item at ns/key
// under a data subject's own keys (a serializer with per-subject keys and
// a namespace that names a subject). A cache of this store's results must
// not keep such an item, opened or absent: a subject's erasure, by this
// process or another, must stop it from being read at once, and only the
// database and the key table know of an erasure (store/cache asks this
// through the stores' Unwrap chain).
func (e *Engine) ItemHasSubject(ns store.Namespace, key string) bool {
	return e.itemHasSubject(ns.String(), key)
}

func (e *Engine) itemHasSubject(ns, key string) bool {
	return e.vals.serde != nil && e.vals.codec.ItemHasSubject(binding.Item{Namespace: ns, Key: key})
}

// decode opens the value column of r, through the cache when e has one. A
// data subject's values are always opened, never served from the cache:
// destroying the subject's keys must stop them from being read, a restored
// copy of their rows included.
func (e *Engine) decode(ctx context.Context, r *store.Row) (map[string]any, error) {
	c := e.cache
	if c == nil || e.itemHasSubject(r.NS, r.Key) {
		return e.vals.Decode(ctx, r.RowKey, r.Value)
	}
	if cv, ok := c.c.Get(r.RowKey); ok && cv.raw == string(r.Value) {
		return jsonvalue.Copy(cv.v).(map[string]any), nil
	}
	v, err := e.vals.Decode(ctx, r.RowKey, r.Value)
	if err == nil && len(r.Value) <= maxCachedValue {
		c.c.Add(r.RowKey, cachedValue{raw: string(r.Value), v: jsonvalue.Copy(v).(map[string]any)})
	}
	return v, err
}
