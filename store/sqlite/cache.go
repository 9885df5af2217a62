package sqlite

import (
	"context"
	"database/sql"
	"strings"
	"sync"
)

// DefaultVectorCacheBytes is the default Options.VectorCacheBytes.
const DefaultVectorCacheBytes = 256 << 20

// vecCache keeps every stored vector of the database in memory, decoded,
// so that a search scores vectors without reading them from SQLite. It is
// valid for one generation of the database: every write transaction that
// changes items bumps store_generation.gen, writes of this process apply
// their changes to the cache in commit order, and a search that finds
// another generation in its read transaction (another process wrote)
// reloads the cache from that transaction's snapshot.
type vecCache struct {
	budget int64 // bytes of vectors; 0 disables the cache

	mu     sync.RWMutex
	gen    int64 // generation items reflects; valid only when items != nil
	items  map[itemKey]*cachedItem
	bytes  int64
	tooBig bool // the vectors exceeded budget: searches scan SQLite
}

type cachedItem struct {
	updated int64
	vecs    [][]float32
	norms   []float32 // |v| of each vector, for cosine scoring
}

func newCachedItem(updated int64, vecs [][]float32) *cachedItem {
	it := &cachedItem{updated: updated, vecs: vecs, norms: make([]float32, len(vecs))}
	for i, v := range vecs {
		it.norms[i] = norm(v)
	}
	return it
}

func newVecCache(budget int64) *vecCache { return &vecCache{budget: budget} }

// bumpGeneration advances the database's generation in a write
// transaction and returns the new one.
func (s *Store) bumpGeneration(ctx context.Context, tx *sql.Tx) (int64, error) {
	var gen int64
	err := tx.StmtContext(ctx, s.st.bump).QueryRowContext(ctx).Scan(&gen)
	return gen, err
}

func readGeneration(ctx context.Context, tx *sql.Tx, st *readStmts) (int64, error) {
	var gen int64
	err := tx.StmtContext(ctx, st.gen).QueryRowContext(ctx).Scan(&gen)
	return gen, err
}

// committed applies the puts of a committed transaction that produced gen.
// Called in commit order (sqlitedb.WriteCommitted).
func (c *vecCache) committed(gen int64, puts []*put, ts int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.items == nil {
		return
	}
	if c.gen != gen-1 {
		c.dropLocked() // another process wrote in between
		return
	}
	for _, p := range puts {
		if old, ok := c.items[p.k]; ok {
			c.bytes -= vecBytes(old.vecs)
			delete(c.items, p.k)
		}
		if p.value != nil && len(p.vectors) > 0 {
			c.items[p.k] = newCachedItem(ts, p.vectors)
			c.bytes += vecBytes(p.vectors)
		}
	}
	c.gen = gen
	if c.bytes > c.budget {
		c.dropLocked()
		c.tooBig = true
	}
}

// invalidate drops the cache (after a sweep, whose deletions it does not
// track).
func (c *vecCache) invalidate() {
	c.mu.Lock()
	c.dropLocked()
	c.mu.Unlock()
}

func (c *vecCache) dropLocked() {
	c.items, c.bytes = nil, 0
}

func vecBytes(vs [][]float32) int64 {
	var n int64
	for _, v := range vs {
		n += int64(4 * len(v))
	}
	return n
}

// candidates scores the cached vectors under prefix when the cache holds
// generation gen; ok is false when it does not.
func (c *vecCache) candidates(gen int64, prefix string, sc *scorer) (cands []candidate, ok bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.items == nil || c.gen != gen {
		return nil, false
	}
	return scoreItems(c.items, prefix, sc), true
}

// enabled reports whether searches should use (and load) the cache.
func (c *vecCache) enabled() bool {
	if c.budget <= 0 {
		return false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return !c.tooBig
}

// load reads every vector of the snapshot tx (generation gen) and installs
// them unless the cache holds a newer generation already. It returns the
// loaded items, or nil when they exceed the budget.
func (c *vecCache) load(ctx context.Context, tx *sql.Tx, gen int64) (map[itemKey]*cachedItem, error) {
	rs, err := tx.QueryContext(ctx, `SELECT prefix, key, updated_at, embedding FROM store_vectors`)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	items := map[itemKey]*cachedItem{}
	var (
		bytes        int64
		ns, key, emb sql.RawBytes
		upd          int64
		last         *cachedItem
		lastK        itemKey
	)
	for rs.Next() {
		if err := rs.Scan(&ns, &key, &upd, &emb); err != nil {
			return nil, err
		}
		v, ok := decodeVector(nil, emb)
		if !ok {
			continue
		}
		if bytes += int64(len(emb)); bytes > c.budget {
			c.mu.Lock()
			c.tooBig = true
			c.mu.Unlock()
			return nil, nil
		}
		if last == nil || lastK.ns != string(ns) || lastK.key != string(key) {
			lastK = itemKey{string(ns), string(key)}
			if last = items[lastK]; last == nil {
				last = &cachedItem{updated: upd}
				items[lastK] = last
			}
		}
		last.vecs = append(last.vecs, v)
		last.norms = append(last.norms, norm(v))
	}
	if err := rs.Err(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.items == nil || c.gen < gen {
		c.items, c.gen, c.bytes = items, gen, bytes
	}
	c.mu.Unlock()
	return items, nil
}

// scoreItems scores every item under prefix ("" for all) by its best
// vector.
func scoreItems(items map[itemKey]*cachedItem, prefix string, sc *scorer) []candidate {
	cands := make([]candidate, 0, len(items))
	for k, it := range items {
		if prefix != "" && k.ns != prefix && !(strings.HasPrefix(k.ns, prefix) && k.ns[len(prefix)] == '.') {
			continue
		}
		best := sc.scoreNorm(it.vecs[0], it.norms[0])
		for i, v := range it.vecs[1:] {
			best = max(best, sc.scoreNorm(v, it.norms[i+1]))
		}
		cands = append(cands, candidate{k: k, updated: it.updated, score: best})
	}
	return cands
}
