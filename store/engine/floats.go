package engine

import (
	"context"
	"sync"
	"time"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/internal/indexing"
	"github.com/memvault/memvault/store/vecindex"
)

// FloatSource is what a transaction of a driver with a code index offers
// the engine's exact float copy (Options.FloatBytes) beyond IndexTx.
type FloatSource interface {
	// StorageBytes is about how many bytes the storage holds (store/sqlitestore:
	// the database file): a storage much larger than the copy's budget is
	// not read to find out whether its vectors fit.
	StorageBytes(ctx context.Context) (int64, error)
	// AllVectors calls fn once per item (expired or not) that has vectors,
	// with all of them, as store.DriverTx.Vectors does.
	AllVectors(ctx context.Context, fn func(k store.RowKey, updated time.Time, vs []store.Vector) error) error
}

// floatCache is the exact copy of a small store's vectors, valid for one
// generation of the storage (see vecindex.State): a store whose vectors
// fit the budget scores every vector in memory, at memory speed, instead of
// ranking by the code index, whose 1-bit codes bound the scores of small,
// low-dimension or sparse vectors (the offline hashing embedder's) too
// loosely. This process's own writes are applied in commit order
// (committed); any other change (another process's write, a recode)
// leaves it behind, and the next search reloads it whole, which costs at
// most the budget of reading.
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
	index map[store.RowKey]int // live slot of each item
	slots []slot
	data  []float32
	norms []float64 // |v| of each vector, as the exact scan computes it
	dead  int       // vectors in dead slots
}

type slot struct {
	k        store.RowKey
	updated  int64
	first, n int
	live     bool
}

func newVecTable(dims int) *vecTable { return &vecTable{dims: dims, index: map[store.RowKey]int{}} }

// add appends an item's vectors of dims dimensions (others are skipped),
// replacing its old ones; an item left without vectors is removed.
func (t *vecTable) add(k store.RowKey, updated int64, vecs [][]float32) {
	t.remove(k)
	s := slot{k: k, updated: updated, first: len(t.norms), live: true}
	for _, v := range vecs {
		if len(v) == t.dims {
			t.data = append(t.data, v...)
			t.norms = append(t.norms, indexing.VectorNorm(v))
			s.n++
		}
	}
	if s.n > 0 {
		t.index[k] = len(t.slots)
		t.slots = append(t.slots, s)
	}
}

func (t *vecTable) remove(k store.RowKey) {
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

// lookup returns the query of namespace ns's space as the search met it,
// without reading keys (nil: its subject's keys are gone); known is false
// when it has not met ns (the caller resolves it outside its locks).
func (qs *queries) lookup(ns string) (sq *spaceQuery, known bool) {
	if qs.one != nil {
		return qs.one, true
	}
	sq, ok, known := qs.per.Lookup(ns)
	if !ok {
		sq = nil
	}
	return sq, known
}

// score scores every live item under prefix ("" for all) by its best
// vector against the query in its space, exactly as the engine's exact
// scan does. It reads no keys: when it meets namespaces whose space qs has
// not met, it returns them (missing) and no candidates.
func (t *vecTable) score(prefix string, qs *queries) (cands []vecindex.Scored, missing []string) {
	cands = make([]vecindex.Scored, 0, len(t.index))
	d := t.dims
	var (
		lastNS string
		sq     *spaceQuery
	)
	for _, s := range t.slots {
		if !s.live || !under(s.k.NS, prefix) {
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
		cands = append(cands, vecindex.Scored{Key: s.k, Updated: s.updated, Score: best})
	}
	if len(missing) > 0 {
		return nil, missing
	}
	return cands, nil
}

// under reports whether namespace ns is prefix or under it ("" matches
// every namespace).
func under(ns, prefix string) bool {
	return prefix == "" || ns == prefix || (len(ns) > len(prefix) && ns[:len(prefix)] == prefix && ns[len(prefix)] == '.')
}

// enabled reports whether searches should use (and load) the copy.
func (c *floatCache) enabled() bool {
	if c == nil || c.budget <= 0 {
		return false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return !c.tooBig
}

// loaded reports whether the copy is in memory (for tests).
func (c *floatCache) loaded() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.snap != nil
}

// committed applies the changes of this process's transaction that
// produced gen, in commit order; full (every code rewritten, or every item
// may have changed) drops the copy.
func (c *floatCache) committed(gen int64, changes []vecindex.Change, ts int64, full bool) {
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
	for _, ch := range changes {
		if ch.Deleted {
			t.remove(ch.Key)
		} else {
			t.add(ch.Key, ts, ch.Vectors)
		}
	}
	t.compact()
	c.gen = gen
	if t.bytes() > c.budget {
		c.snap, c.tooBig = nil, true
	}
}

// candidates scores the copy under prefix when it holds generation gen,
// loading it from src (a read of generation gen) when it does not. ok is
// false when the vectors do not fit the budget, or (a search meeting
// several spaces, rarely) when the copy moved on while the search made the
// queries of spaces it had not met: the caller ranks otherwise.
func (c *floatCache) candidates(ctx context.Context, src FloatSource, gen int64, prefix string, qs *queries) (cands []vecindex.Scored, ok bool, err error) {
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
				if loaded, err = c.load(ctx, src, gen); err != nil || loaded == nil {
					return nil, false, err
				}
				continue
			}
		}
		if len(missing) == 0 {
			return cands, true, nil
		}
		if err := qs.Resolve(ctx, missing); err != nil {
			return nil, false, err
		}
	}
	return nil, false, nil
}

// errTooBig stops a load at the budget.
type errTooBig struct{}

func (errTooBig) Error() string { return "float copy over budget" }

// load reads every vector of src (generation gen) and installs them
// unless the copy holds a newer generation already. It returns nil when
// the vectors exceed the budget (and marks the cache too big), having read
// no more than the budget. Vectors of other dimensions than the index's
// (left by an earlier configuration) are not copied.
func (c *floatCache) load(ctx context.Context, src FloatSource, gen int64) (*vecTable, error) {
	size, err := src.StorageBytes(ctx)
	if err != nil {
		return nil, err
	}
	tooBig := func() (*vecTable, error) {
		c.mu.Lock()
		c.tooBig = true
		c.mu.Unlock()
		return nil, nil
	}
	if size > 4*c.budget {
		return tooBig()
	}
	t := newVecTable(c.dims)
	err = src.AllVectors(ctx, func(k store.RowKey, updated time.Time, vs []store.Vector) error {
		s := slot{k: k, updated: updated.UnixNano(), first: len(t.norms), live: true}
		for _, v := range vs {
			if len(v.Vec) == c.dims {
				t.data = append(t.data, v.Vec...)
				t.norms = append(t.norms, indexing.VectorNorm(v.Vec))
				s.n++
			}
		}
		if s.n > 0 {
			t.remove(k) // not expected; keeps the table sound
			t.index[k] = len(t.slots)
			t.slots = append(t.slots, s)
		}
		if t.bytes() > c.budget {
			return errTooBig{}
		}
		return nil
	})
	if _, over := err.(errTooBig); over {
		return tooBig()
	}
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.snap == nil || c.gen < gen {
		c.snap, c.gen = t, gen
	}
	c.mu.Unlock()
	return t, nil
}
