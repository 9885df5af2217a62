package embeddings

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"sync/atomic"
	"unsafe"

	lru "github.com/hashicorp/golang-lru/v2"
)

// Cached is an Embedder that remembers the vectors of an underlying
// Embedder in a least-recently-used cache.
//
// Entries are keyed by the underlying embedder's Name (read on every call,
// so an embedder that switches model never serves stale vectors), by
// whether the vector is a document or a query vector, and by the SHA-256 of
// the text; the text itself is not kept. Query and document vectors live in
// distinct key spaces because some models embed them differently (for
// example with an instruction prefix for queries), even though others —
// Hashing, OpenAI, and LangGraph's Postgres store, which embeds queries with
// embed_documents — do not.
//
// EmbedDocuments looks every text up first and passes only the misses, each
// distinct text once, to the underlying embedder in a single call; results
// come back in input order. Concurrent calls that miss on the same text may
// both ask the underlying embedder; the cache does not coalesce them.
//
// Every returned slice is a fresh copy that the caller owns and may modify;
// the copy costs one allocation per vector (see BenchmarkCachedHit).
// Errors of the underlying embedder are returned unchanged, and nothing is
// cached from a failed call.
//
// A Cached is safe for concurrent use.
type Cached struct {
	inner Embedder
	cache *lru.Cache[cacheKey, []float32]

	hits, misses, embedded, evictions atomic.Uint64
}

var _ Embedder = (*Cached)(nil)

// cacheKey identifies one cached vector.
type cacheKey struct {
	name  string
	query bool
	text  [sha256.Size]byte
}

// CacheStats counts a Cached's cache traffic since it was created.
type CacheStats struct {
	// Hits is the number of texts served from the cache.
	Hits uint64
	// Misses is the number of texts not found in the cache, including
	// repeats of a text within one EmbedDocuments call.
	Misses uint64
	// Embedded is the number of texts passed to the underlying embedder;
	// it is below Misses when a call repeats a text.
	Embedded uint64
	// Evictions is the number of vectors dropped to make room.
	Evictions uint64
	// Len is the number of vectors currently cached.
	Len int
}

// NewCached returns inner behind an LRU cache holding at most size vectors
// (each costs about 4·Dims bytes plus some 100 bytes of bookkeeping). It
// fails with ErrInvalidCacheSize when size < 1.
func NewCached(inner Embedder, size int) (*Cached, error) {
	if size < 1 {
		return nil, fmt.Errorf("%w: %d", ErrInvalidCacheSize, size)
	}
	c := &Cached{inner: inner}
	cache, err := lru.NewWithEvict(size, func(cacheKey, []float32) { c.evictions.Add(1) })
	if err != nil {
		return nil, fmt.Errorf("embeddings: %w", err)
	}
	c.cache = cache
	return c, nil
}

// Dims returns the underlying embedder's Dims.
func (c *Cached) Dims() int { return c.inner.Dims() }

// Name returns the underlying embedder's Name: the cache does not change
// the vectors.
func (c *Cached) Name() string { return c.inner.Name() }

// Stats returns the cache's counters.
func (c *Cached) Stats() CacheStats {
	return CacheStats{
		Hits:      c.hits.Load(),
		Misses:    c.misses.Load(),
		Embedded:  c.embedded.Load(),
		Evictions: c.evictions.Load(),
		Len:       c.cache.Len(),
	}
}

// Purge empties the cache; the counters are kept.
func (c *Cached) Purge() { c.cache.Purge() }

// EmbedDocuments returns one vector per text, in input order, from the
// cache where possible and otherwise from one EmbedDocuments call of the
// underlying embedder with the distinct missing texts. It fails with ctx's
// error when ctx is done, with ErrCountMismatch or ErrDimensionMismatch
// when the underlying embedder misbehaves, or with its error.
func (c *Cached) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	name, dims := c.inner.Name(), c.inner.Dims()
	out := make([][]float32, len(texts))
	var (
		missTexts []string
		missKeys  []cacheKey
		missAt    []int            // missAt[i] is the index in texts of missTexts[i]
		pending   map[cacheKey]int // key -> index in missTexts
		repeats   [][2]int         // {index in texts, index in missTexts}
	)
	for i, text := range texts {
		k := cacheKey{name: name, text: textSum(text)}
		if v, ok := c.cache.Get(k); ok {
			out[i] = slices.Clone(v)
			continue
		}
		if j, ok := pending[k]; ok {
			repeats = append(repeats, [2]int{i, j})
			continue
		}
		if pending == nil {
			pending = make(map[cacheKey]int)
		}
		pending[k] = len(missTexts)
		missTexts = append(missTexts, text)
		missKeys = append(missKeys, k)
		missAt = append(missAt, i)
	}
	nmiss := len(missTexts) + len(repeats)
	c.hits.Add(uint64(len(texts) - nmiss))
	c.misses.Add(uint64(nmiss))
	if len(missTexts) == 0 {
		return out, nil
	}

	c.embedded.Add(uint64(len(missTexts)))
	vecs, err := c.inner.EmbedDocuments(ctx, missTexts)
	if err != nil {
		return nil, err
	}
	if len(vecs) != len(missTexts) {
		return nil, fmt.Errorf("%w: %s returned %d vectors for %d texts", ErrCountMismatch, name, len(vecs), len(missTexts))
	}
	for j, v := range vecs {
		if len(v) != dims {
			return nil, fmt.Errorf("%w: %s returned %d components for text %d, want %d", ErrDimensionMismatch, name, len(v), missAt[j], dims)
		}
	}
	for j, v := range vecs {
		c.cache.Add(missKeys[j], slices.Clone(v))
		out[missAt[j]] = v
	}
	for _, r := range repeats {
		out[r[0]] = slices.Clone(vecs[r[1]])
	}
	return out, nil
}

// EmbedQuery returns the query vector of text from the cache, or from the
// underlying embedder's EmbedQuery on a miss. Query vectors are cached
// apart from document vectors of the same text.
func (c *Cached) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	name, dims := c.inner.Name(), c.inner.Dims()
	k := cacheKey{name: name, query: true, text: textSum(text)}
	if v, ok := c.cache.Get(k); ok {
		c.hits.Add(1)
		return slices.Clone(v), nil
	}
	c.misses.Add(1)
	c.embedded.Add(1)
	v, err := c.inner.EmbedQuery(ctx, text)
	if err != nil {
		return nil, err
	}
	if len(v) != dims {
		return nil, fmt.Errorf("%w: %s returned %d components for the query, want %d", ErrDimensionMismatch, name, len(v), dims)
	}
	c.cache.Add(k, slices.Clone(v))
	return v, nil
}

// textSum returns the SHA-256 of text without copying it: Sum256 only reads
// its argument and does not retain it, so viewing the string's bytes is
// safe and saves an allocation of the text's size on every lookup.
func textSum(text string) [sha256.Size]byte {
	return sha256.Sum256(unsafe.Slice(unsafe.StringData(text), len(text)))
}
