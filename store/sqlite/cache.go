package sqlite

import (
	"context"
	"database/sql"
	"strings"
	"sync"

	"github.com/memvault/memvault/store/internal/indexing"
)

// DefaultVectorCacheBytes is the default Options.VectorCacheBytes.
const DefaultVectorCacheBytes = 256 << 20

// vecCache keeps every stored vector of the database in memory, decoded
// into one contiguous array, so that a search scores vectors at memory
// bandwidth without reading them from SQLite. It is valid for one
// generation of the database: every write transaction that changes items
// bumps store_generation.gen, writes of this process apply their changes to
// the cache in commit order, and a search that finds another generation in
// its read transaction (another process wrote) reloads the cache from that
// transaction's snapshot.
type vecCache struct {
	budget int64 // bytes of vectors; 0 disables the cache
	dims   int

	mu     sync.RWMutex
	gen    int64     // generation snap reflects; valid only when snap != nil
	snap   *vecTable // nil: not loaded
	tooBig bool      // the vectors exceeded budget: searches scan SQLite
}

// vecTable is the vectors of a set of items. Item i owns vectors
// [slots[i].first, slots[i].first+slots[i].n) of data (dims floats each)
// and norms. Replaced and deleted items leave dead slots, compacted when
// they are half of the table.
type vecTable struct {
	dims  int
	index map[itemKey]int // live slot of each item
	slots []slot
	data  []float32
	norms []float32 // |v| of each vector, for cosine
	dead  int       // vectors in dead slots
}

type slot struct {
	k        itemKey
	updated  int64
	first, n int
	live     bool
}

func newVecCache(budget int64, dims int) *vecCache { return &vecCache{budget: budget, dims: dims} }

func newVecTable(dims int) *vecTable {
	return &vecTable{dims: dims, index: map[itemKey]int{}}
}

// add appends an item's vectors (all of length dims).
func (t *vecTable) add(k itemKey, updated int64, vecs [][]float32) {
	t.remove(k)
	t.index[k] = len(t.slots)
	t.slots = append(t.slots, slot{k: k, updated: updated, first: len(t.norms), n: len(vecs), live: true})
	for _, v := range vecs {
		t.data = append(t.data, v...)
		t.norms = append(t.norms, float32(indexing.VectorNorm(v)))
	}
}

func (t *vecTable) remove(k itemKey) {
	if i, ok := t.index[k]; ok {
		t.slots[i].live = false
		t.dead += t.slots[i].n
		delete(t.index, k)
	}
}

// compact drops dead slots once they hold half of the vectors.
func (t *vecTable) compact() {
	if t.dead == 0 || 2*t.dead < len(t.norms) {
		return
	}
	c := newVecTable(t.dims)
	c.slots = make([]slot, 0, len(t.index))
	c.data = make([]float32, 0, len(t.data)-t.dead*t.dims)
	c.norms = make([]float32, 0, len(t.norms)-t.dead)
	for _, s := range t.slots {
		if !s.live {
			continue
		}
		c.index[s.k] = len(c.slots)
		c.slots = append(c.slots, slot{k: s.k, updated: s.updated, first: len(c.norms), n: s.n, live: true})
		c.data = append(c.data, t.data[s.first*t.dims:(s.first+s.n)*t.dims]...)
		c.norms = append(c.norms, t.norms[s.first:s.first+s.n]...)
	}
	*t = *c
}

func (t *vecTable) bytes() int64 { return int64(4 * (len(t.data) + len(t.norms))) }

// score scores every live item under prefix ("" for all) by its best
// vector.
func (t *vecTable) score(prefix string, sc *indexing.QueryScorer) []candidate {
	cands := make([]candidate, 0, len(t.index))
	d := t.dims
	for _, s := range t.slots {
		if !s.live {
			continue
		}
		if prefix != "" && s.k.ns != prefix && !(strings.HasPrefix(s.k.ns, prefix) && s.k.ns[len(prefix)] == '.') {
			continue
		}
		best := sc.Score(t.data[s.first*d:(s.first+1)*d], float64(t.norms[s.first]))
		for j := s.first + 1; j < s.first+s.n; j++ {
			best = max(best, sc.Score(t.data[j*d:(j+1)*d], float64(t.norms[j])))
		}
		cands = append(cands, candidate{k: s.k, updated: s.updated, score: best})
	}
	return cands
}

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
	if c.snap == nil {
		return
	}
	if c.gen != gen-1 {
		c.snap = nil // another process wrote in between
		return
	}
	t := c.snap
	for _, p := range puts {
		if p.encoded != nil && len(p.Vectors) > 0 {
			t.add(p.k, ts, p.Vectors)
		} else {
			t.remove(p.k)
		}
	}
	t.compact()
	c.gen = gen
	if t.bytes() > c.budget {
		c.snap, c.tooBig = nil, true
	}
}

// invalidate drops the cache (after a sweep, whose deletions it does not
// track).
func (c *vecCache) invalidate() {
	c.mu.Lock()
	c.snap = nil
	c.mu.Unlock()
}

// candidates scores the cached vectors under prefix when the cache holds
// generation gen; ok is false when it does not.
func (c *vecCache) candidates(gen int64, prefix string, sc *indexing.QueryScorer) (cands []candidate, ok bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.snap == nil || c.gen != gen {
		return nil, false
	}
	return c.snap.score(prefix, sc), true
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
// loaded table, or nil when the vectors exceed the budget. Vectors of other
// dimensions than the index's (left by an earlier configuration) are not
// cached.
func (c *vecCache) load(ctx context.Context, tx *sql.Tx, gen int64) (*vecTable, error) {
	// WITHOUT ROWID: the scan is in primary-key order, an item's vectors
	// together, without sorting.
	rs, err := tx.QueryContext(ctx, `SELECT prefix, key, updated_at, embedding FROM store_vectors ORDER BY prefix, key`)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	t := newVecTable(c.dims)
	var (
		ns, key, emb sql.RawBytes
		upd          int64
		buf          []float32
		open         = -1 // slot being filled
	)
	for rs.Next() {
		if err := rs.Scan(&ns, &key, &upd, &emb); err != nil {
			return nil, err
		}
		var ok bool
		if buf, ok = decodeVector(buf[:0], emb); !ok || len(buf) != c.dims {
			continue
		}
		if open < 0 || t.slots[open].k.ns != string(ns) || t.slots[open].k.key != string(key) {
			k := itemKey{string(ns), string(key)}
			t.remove(k) // not expected in key order; keeps the table sound
			open = len(t.slots)
			t.index[k] = open
			t.slots = append(t.slots, slot{k: k, updated: upd, first: len(t.norms), live: true})
		}
		t.data = append(t.data, buf...)
		t.norms = append(t.norms, float32(indexing.VectorNorm(buf)))
		t.slots[open].n++
		if t.bytes() > c.budget {
			c.mu.Lock()
			c.tooBig = true
			c.mu.Unlock()
			return nil, nil
		}
	}
	if err := rs.Err(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.snap == nil || c.gen < gen {
		c.snap, c.gen = t, gen
	}
	c.mu.Unlock()
	return t, nil
}
