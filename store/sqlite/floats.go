package sqlite

import (
	"context"
	"database/sql"
	"strings"
	"sync"

	"github.com/memvault/memvault/store/internal/indexing"
)

// FloatCacheBytes is how many bytes of vectors a store keeps as an exact,
// in-process float32 copy: a store whose vectors fit (10 000 of 256
// dimensions take 10 MiB) scores every vector in memory, at memory speed,
// instead of ranking by the code index. The code index pays off on large
// stores of dense vectors; 1-bit codes of small, low-dimension or sparse
// vectors (the offline hashing embedder's) bound scores too loosely, and
// such a search read about every vector from SQLite (40 ms over 10 000 ×
// 256 against 1-2 ms in memory).
const FloatCacheBytes = 32 << 20

// floatBudget is FloatCacheBytes, a variable so that the tests of the code
// index can turn the copy off.
var floatBudget int64 = FloatCacheBytes

// floatCache is the exact copy of a small store's vectors, valid for one
// generation of the database. This process's own writes are applied in
// commit order (committed); any other change (another process's write, a
// sweep, a recode) leaves it behind, and the next search reloads it whole,
// which costs at most FloatCacheBytes of reading.
type floatCache struct {
	budget int64 // bytes of vectors; 0 disables the copy
	dims   int

	mu     sync.RWMutex
	gen    int64     // generation snap reflects; valid only when snap != nil
	snap   *vecTable // nil: not loaded
	tooBig bool      // the vectors exceeded budget: the code index serves
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
	norms []float64 // |v| of each vector, as the exact scan computes it
	dead  int       // vectors in dead slots
}

type slot struct {
	k        itemKey
	updated  int64
	first, n int
	live     bool
}

func newFloatCache(budget int64, dims int) *floatCache {
	return &floatCache{budget: budget, dims: dims}
}

func newVecTable(dims int) *vecTable { return &vecTable{dims: dims, index: map[itemKey]int{}} }

// add appends an item's vectors (all of length dims), replacing its old
// ones.
func (t *vecTable) add(k itemKey, updated int64, vecs [][]float32) {
	t.remove(k)
	t.index[k] = len(t.slots)
	t.slots = append(t.slots, slot{k: k, updated: updated, first: len(t.norms), n: len(vecs), live: true})
	for _, v := range vecs {
		t.data = append(t.data, v...)
		t.norms = append(t.norms, indexing.VectorNorm(v))
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
	c.norms = make([]float64, 0, len(t.norms)-t.dead)
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

func (t *vecTable) bytes() int64 { return int64(4*len(t.data) + 8*len(t.norms)) }

// score scores every live item under prefix ("" for all) by its best
// vector against the query in its space, exactly as scoreVectors does from
// SQLite. It reads no keys: when it meets namespaces whose space qs has
// not met, it returns them (missing) and no candidates, and the caller
// resolves them outside the cache's lock and scores again.
func (t *vecTable) score(prefix string, qs *queries) (cands []candidate, missing []string) {
	cands = make([]candidate, 0, len(t.index))
	d := t.dims
	var (
		lastNS string
		sq     *spaceQuery
	)
	for _, s := range t.slots {
		if !s.live {
			continue
		}
		if prefix != "" && s.k.NS != prefix && !(strings.HasPrefix(s.k.NS, prefix) && s.k.NS[len(prefix)] == '.') {
			continue
		}
		if sq == nil || s.k.NS != lastNS {
			var known bool
			if sq, known = qs.lookup(s.k.NS); !known {
				if len(missing) == 0 || missing[len(missing)-1] != s.k.NS {
					missing = append(missing, s.k.NS)
				}
				sq = nil
				continue
			}
			lastNS = s.k.NS
			if sq == nil {
				continue // its subject's keys are gone
			}
		}
		sc := sq.sc
		best := sc.Score(t.data[s.first*d:(s.first+1)*d], t.norms[s.first])
		for j := s.first + 1; j < s.first+s.n; j++ {
			best = max(best, sc.Score(t.data[j*d:(j+1)*d], t.norms[j]))
		}
		cands = append(cands, candidate{Key: s.k, Updated: s.updated, Score: best})
	}
	if len(missing) > 0 {
		return nil, missing
	}
	return cands, nil
}

// enabled reports whether searches should use (and load) the copy.
func (c *floatCache) enabled() bool {
	if c.budget <= 0 {
		return false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return !c.tooBig
}

// committed applies the puts of this process's transaction that produced
// gen, in commit order; full (every code rewritten) drops the copy.
func (c *floatCache) committed(gen int64, puts []*put, ts int64, full bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.snap == nil {
		return
	}
	if c.gen != gen-1 || full {
		c.snap = nil // another process wrote in between, or a recode
		return
	}
	t := c.snap
	for _, p := range puts {
		if p.encoded != nil && len(p.Vectors) > 0 && len(p.Vectors[0]) == c.dims {
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

// invalidate drops the copy (after a write it does not track: a sweep).
func (c *floatCache) invalidate() {
	c.mu.Lock()
	c.snap = nil
	c.mu.Unlock()
}

// candidates scores the copy under prefix when it holds generation gen,
// loading it from tx (a snapshot of generation gen) when it does not. ok
// is false when the vectors do not fit the budget, or (a search meeting
// several spaces, rarely) when the copy moved on while the search made the
// queries of spaces it had not met: the caller ranks otherwise.
func (c *floatCache) candidates(ctx context.Context, tx *sql.Tx, gen int64, prefix string, qs *queries) (cands []candidate, ok bool, err error) {
	var loaded *vecTable
	for range 3 {
		var missing []string
		c.mu.RLock()
		if c.snap != nil && c.gen == gen {
			cands, missing = c.snap.score(prefix, qs)
			c.mu.RUnlock()
		} else {
			c.mu.RUnlock()
			if loaded != nil {
				// Loaded, but the copy holds a newer generation: score
				// the table loaded (as one space's search does at once).
				cands, missing = loaded.score(prefix, qs)
			} else {
				if loaded, err = c.load(ctx, tx, gen); err != nil || loaded == nil {
					return nil, false, err
				}
				continue
			}
		}
		if len(missing) == 0 {
			return cands, true, nil
		}
		if err := qs.resolveAll(ctx, missing); err != nil {
			return nil, false, err
		}
	}
	return nil, false, nil
}

// load reads every vector of the snapshot tx (generation gen) and installs
// them unless the copy holds a newer generation already. It returns nil
// when the vectors exceed the budget (and marks the cache too big), having
// read no more than the budget. Vectors of other dimensions than the
// index's (left by an earlier configuration) are not copied.
func (c *floatCache) load(ctx context.Context, tx *sql.Tx, gen int64) (*vecTable, error) {
	// A database file much larger than the budget is not read to find out:
	// its vectors most likely do not fit, and the code index serves it.
	var pages, pageSize int64
	if err := tx.QueryRowContext(ctx, `SELECT page_count, page_size FROM pragma_page_count(), pragma_page_size()`).Scan(&pages, &pageSize); err != nil {
		return nil, err
	}
	if pages*pageSize > 4*c.budget {
		c.mu.Lock()
		c.tooBig = true
		c.mu.Unlock()
		return nil, nil
	}
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
		if open < 0 || t.slots[open].k.NS != string(ns) || t.slots[open].k.Key != string(key) {
			k := itemKey{NS: string(ns), Key: string(key)}
			t.remove(k) // not expected in key order; keeps the table sound
			open = len(t.slots)
			t.index[k] = open
			t.slots = append(t.slots, slot{k: k, updated: upd, first: len(t.norms), live: true})
		}
		t.data = append(t.data, buf...)
		t.norms = append(t.norms, indexing.VectorNorm(buf))
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
