package vecindex

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
)

// Scored is an item scored exactly: by the best score of its vectors.
type Scored struct {
	Key     Key
	Updated int64 // when the item was last written
	Score   float64
}

// CompareScored orders by score descending, then as a search without a
// query does (most recently updated first, then namespace and key).
func CompareScored(a, b Scored) int {
	// Not cmp.Or: it would compare the strings of every pair, and a
	// ranking compares each scanned item with its worst kept one.
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	if c := cmp.Compare(b.Updated, a.Updated); c != 0 {
		return c
	}
	if c := strings.Compare(a.Key.NS, b.Key.NS); c != 0 {
		return c
	}
	return strings.Compare(a.Key.Key, b.Key.Key)
}

// Rescorer is a search's exact scoring, which the driver does from its
// storage (store/sqlitestore: the vectors in the search's read transaction).
type Rescorer interface {
	Queries
	// Resolve makes the queries of namespaces, which Best reported
	// missing, known; it may read keys (the index's lock is not held).
	Resolve(ctx context.Context, namespaces []string) error
	// Rescore reads the vectors of the items keys and returns the items
	// scored exactly, each by its best vector, ordered by CompareScored;
	// items it cannot score (gone, or their data subject's keys gone)
	// are left out.
	Rescore(ctx context.Context, keys []Key) ([]Scored, error)
	// Proxy maps an exact score to the scale of the estimates (see
	// Estimator), on which a bound can be compared with it.
	Proxy(score float64) float32
}

// CodeReader is a Rescorer that can also read the stored codes of items
// (Source.Codes, in the search's read): Top then bounds each candidate by
// the fine part of its codes (see fine.go) before reading its vectors.
type CodeReader interface {
	Codes(ctx context.Context, keys []Key, fn func(k Key, updated int64, code []byte)) error
}

// FineReader is a CodeReader that can also read the fine parts of items'
// codes alone, as SplitCode cut them (store/sqlitestore: store_vector_fine,
// without the code rows, whose sign bits and metadata the index holds):
// Top then reads those only, a third fewer pages a candidate. fn gets each
// fine part of the items keys (in any order), valid only during the call.
type FineReader interface {
	Fines(ctx context.Context, keys []Key, fn func(k Key, fine []byte)) error
}

// RescoreBatch is how many items Top reads and scores exactly at a
// time; MaxBounded bounds the items it ranks by bound per scan of the
// index; RefineBatch is the most items' codes it reads at a time to bound
// them by their fine parts.
const (
	RescoreBatch = 64
	MaxBounded   = 4096
	RefineBatch  = 256
)

// candidate is an item Top may rescore, and its bound.
type candidate struct {
	key   Key
	bound float32
	slot  int32 // its slot in the index best ranked it in
}

// midChunk is how many items, in the order of their sign bits' bounds,
// Top bounds again by their middle parts at a time: those whose sign
// bits already bound them below every bound ahead of them, or below the
// need-th score found, never are.
const midChunk = 256

// Top returns the first need (≥ 1) items of the exact ranking of the
// items under prefix at generation gen. Items are ranked by the bounds of
// their sign bits (Best), the best of them bounded again by their codes'
// middle parts where the index holds them (mid.go; an item of the rest
// still bounds above every unranked one: see best); when r is a
// CodeReader, the best of them are bounded again by the fine parts of
// their stored codes, RefineBatch at a time (only those still at or above
// the need-th best exact score found), as long as such a bound is above
// every fine one and above that score; items are rescored (r.Rescore) in
// the order of their tightest bounds, a batch at a time, until every
// bound left, of either kind, is below the need-th best exact score
// found, and the best need rescored are then the exact ranking's first.
// ok is false when the index cannot answer, and the caller ranks by exact
// scan instead: it does not hold gen (the caller's process wrote since
// its snapshot), or its bounds are too loose (past a tenth of the items
// rescored, or half of them refined, one exact scan is cheaper; codes of
// sparse vectors, as the offline hashing embedder's, bound loosely).
func (c *Cache) Top(ctx context.Context, gen int64, prefix string, r Rescorer, need int) (top []Scored, ok bool, err error) {
	need = max(need, 1)
	cr, refine := r.(CodeReader)
	want := min(MaxBounded, max(4*need, 256))
	if refine {
		// Refining is cheap next to rescoring: rank enough by sign bits
		// for a dense topic in one scan of the index.
		want = MaxBounded / 2
	}
	emitted := map[Key]bool{} // ranked by bound so far
	var (
		held *codeIndex   // the index best ranked in
		ests []*Estimator // its estimators, by namespace
	)
	// fill ranks the next want items by their sign bits' bounds (see
	// best): signs, best first, and rest, the bound of every item not
	// ranked yet (-Inf when none is left).
	fill := func() (signs []candidate, rest float32, left int, ok bool, err error) {
		var missing []string
		for range 2 {
			signs, held, ests, rest, left, missing, ok = c.best(gen, prefix, r, want, emitted)
			if !ok || len(missing) == 0 {
				break
			}
			// Spaces the search had not met: their queries are made
			// outside the index's lock (they may read keys), then it
			// ranks again.
			if err := r.Resolve(ctx, missing); err != nil {
				return nil, 0, 0, false, err
			}
		}
		if !ok || len(missing) > 0 {
			return nil, 0, 0, false, nil
		}
		for _, cd := range signs {
			emitted[cd.key] = true
		}
		if left <= len(signs) {
			rest = float32(math.Inf(-1))
		}
		return signs, rest, left, true, nil
	}
	signs, rest, total, ok, err := fill()
	if !ok || err != nil {
		return nil, false, err
	}
	var queue []candidate // bounded by middle parts (or kept), best first
	var (
		got  []Scored
		pool []candidate // bounded by fine parts (or kept), best first
	)
	budget, refineBudget := max(512, total/10), max(2*MaxBounded, total/2)
	refineBatch := max(need, 16)
	for rescored, refined := 0, 0; ; {
		next, best := float32(math.Inf(-1)), float32(math.Inf(-1))
		if len(queue) > 0 {
			next = queue[0].bound
		}
		if len(pool) > 0 {
			best = pool[0].bound
		}
		th := float32(math.Inf(-1))
		if len(got) >= need {
			th = r.Proxy(got[need-1].Score)
		}
		front := rest
		if len(signs) > 0 {
			front = signs[0].bound
		}
		if front >= th && front > next && front > best {
			// Items bounded by sign bits alone bound above every other.
			if len(signs) == 0 {
				// Items not ranked yet.
				if signs, rest, _, ok, err = fill(); !ok || err != nil {
					return nil, false, err
				}
				continue
			}
			n := min(len(signs), midChunk)
			part := slices.Clone(signs[:n])
			signs = signs[n:]
			if !c.midBound(gen, held, ests, part) {
				return nil, false, nil // the index changed: the caller scans
			}
			queue = mergeCandidates(queue, part)
			continue
		}
		if len(got) >= need && best < th && next < th && front < th {
			break
		}
		if len(queue) > 0 && next >= th && (next > best || len(pool) == 0) {
			// A sign bits' (or middle part's) bound leads: bound the next
			// items finely.
			n := min(len(queue), RescoreBatch)
			if refine {
				// From RescoreBatch up, doubling: spread-out data needs
				// about one batch, a dense topic all of its items. Items
				// bounded below the need-th score found are not: they
				// cannot rank.
				n = min(len(queue), refineBatch)
				refineBatch = min(2*refineBatch, RefineBatch)
				for n > 1 && queue[n-1].bound < th {
					n--
				}
			}
			if refined += n; refined > refineBudget {
				c.Stats.Abandoned.Add(1)
				return nil, false, nil
			}
			part := slices.Clone(queue[:n])
			if refine {
				if fr, ok := r.(FineReader); ok {
					if ok, err := c.refineFines(ctx, fr, gen, held, ests, part); !ok || err != nil {
						return nil, false, err // !ok: the index changed, the caller scans
					}
				} else if err := c.refine(ctx, cr, r, part); err != nil {
					return nil, false, err
				}
				c.Stats.Refined.Add(int64(n))
			}
			queue = queue[n:]
			pool = append(pool, part...)
			slices.SortFunc(pool, func(a, b candidate) int { return cmp.Compare(b.bound, a.bound) })
			continue
		}
		if len(pool) == 0 {
			break // nothing left to rank
		}
		// Fine bounds are close to the scores: the first need or so
		// rescored are nearly always the page, and the bound of the next
		// below its last score.
		batch := RescoreBatch
		if refine {
			batch = need
		}
		n := 0
		for n < min(len(pool), batch) && pool[n].bound >= th {
			n++
		}
		if rescored >= budget {
			c.Stats.Abandoned.Add(1)
			return nil, false, nil
		}
		keys := make([]Key, n)
		for i := range keys {
			keys[i] = pool[i].key
		}
		pool = pool[n:]
		part, err := r.Rescore(ctx, keys)
		if err != nil {
			return nil, false, err
		}
		c.Stats.Rescored.Add(int64(n))
		rescored += n
		got = append(got, part...)
		slices.SortFunc(got, CompareScored)
	}
	return got[:min(len(got), need)], true, nil
}

// mergeCandidates merges b into a, both best first.
func mergeCandidates(a, b []candidate) []candidate {
	if len(a) == 0 {
		return b
	}
	out := append(slices.Clone(a), b...)
	slices.SortStableFunc(out, func(x, y candidate) int { return cmp.Compare(y.bound, x.bound) })
	return out
}

// best is Best for Top: the r items of highest bound by sign bits, best
// first, with their slots in t, the index they were ranked in, and the
// estimators of its namespaces (see midBound); rest is the lowest bound
// among them, above which no item not returned bounds.
func (c *Cache) best(gen int64, prefix string, qs Queries, r int, skip map[Key]bool) (signs []candidate, t *codeIndex, ests []*Estimator, rest float32, left int, missing []string, ok bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	t = c.snap
	if t == nil || c.gen != gen {
		return nil, nil, nil, 0, 0, nil, false
	}
	ests, missing = t.estimators(prefix, qs)
	if len(missing) > 0 {
		return nil, nil, nil, 0, 0, missing, true
	}
	all := t.estimateAll(ests, skip)
	n := min(r, len(all))
	TopK(all, n, compareApprox)
	rest = float32(math.Inf(-1))
	if n > 0 {
		rest = all[n-1].est
	}
	signs = make([]candidate, 0, n)
	for _, a := range all[:n] {
		signs = append(signs, candidate{key: t.itemOf(&t.slots[a.slot]), bound: a.est, slot: a.slot})
	}
	return signs, t, ests, rest, len(all), nil, true
}

// midBound bounds cands, ranked by best in index t at generation gen,
// again by the middle parts of their codes where they have them (the
// best of an item's codes, each by the tighter of its two bounds), and
// sorts them best first. It reports false when the cache no longer holds
// t at gen (the slots may then name other items).
func (c *Cache) midBound(gen int64, t *codeIndex, ests []*Estimator, cands []candidate) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.snap != t || c.gen != gen {
		return false
	}
	if t.mid == nil {
		return true // sorted by sign bits already
	}
	w := t.words
	for i := range cands {
		s := &t.slots[cands[i].slot]
		e := ests[s.ns]
		tight := float32(math.Inf(-1))
		for j := int(s.first); j < int(s.first+s.n); j++ {
			b := e.estimate(t.bits[j*w:(j+1)*w], &t.meta[j])
			if lv, mm, ok := t.midOf(j); ok {
				b = min(b, e.estimateMid(lv, mm, &t.meta[j]))
			}
			tight = max(tight, b)
		}
		cands[i].bound = min(cands[i].bound, tight)
	}
	c.Stats.MidBounded.Add(int64(len(cands)))
	slices.SortStableFunc(cands, func(x, y candidate) int { return cmp.Compare(y.bound, x.bound) })
	return true
}

// refine replaces the bounds of cands by those of the fine parts of their
// stored codes (the best of an item's codes; a code without a fine part,
// of format 2, bounds by its sign bits), leaving an item none of whose
// codes could be read with its bound.
func (c *Cache) refine(ctx context.Context, cr CodeReader, qs Queries, cands []candidate) error {
	c.mu.RLock()
	var centre []float32
	if c.snap != nil {
		centre = c.snap.centre
	}
	dims := c.dims
	c.mu.RUnlock()
	at := make(map[Key]int, len(cands))
	seen := make([]bool, len(cands))
	keys := make([]Key, len(cands))
	for i, cd := range cands {
		at[cd.key] = i
		keys[i] = cd.key
	}
	ests := map[string]*Estimator{}
	var words []uint64
	err := cr.Codes(ctx, keys, func(k Key, _ int64, b []byte) {
		i, ok := at[k]
		if !ok {
			return
		}
		e, ok := ests[k.NS]
		if !ok {
			e, _ = qs.Estimator(k.NS, centre)
			ests[k.NS] = e
		}
		if e == nil {
			return
		}
		var est float32
		if f, m, ok := decodeFine(b, dims); ok {
			est = e.estimateFine(&f, &m)
		} else if w, m, ok := decodeCode(words[:0], b, dims); ok {
			words = w
			est = e.estimate(w, &m)
		} else {
			return
		}
		if !seen[i] {
			cands[i].bound, seen[i] = est, true
		} else {
			cands[i].bound = max(cands[i].bound, est)
		}
	})
	return err
}

// refineFines is refine from the fine parts alone (FineReader), scored
// against the metadata of the candidates' codes in index t, which ranked
// them at generation gen with the estimators ests: an item whose codes
// each have their fine part read gets the best bound of every fine part
// with every code's metadata (its own pairs among them: an upper bound of
// its best score); any other keeps its bound. It reports false when the
// cache no longer holds t at gen.
func (c *Cache) refineFines(ctx context.Context, fr FineReader, gen int64, t *codeIndex, ests []*Estimator, cands []candidate) (bool, error) {
	type item struct {
		metas []codeMeta
		e     *Estimator
		best  float32
		fines int
	}
	items := make([]item, len(cands))
	at := make(map[Key]int, len(cands))
	keys := make([]Key, len(cands))
	c.mu.RLock()
	if c.snap != t || c.gen != gen {
		c.mu.RUnlock()
		return false, nil
	}
	for i, cd := range cands {
		s := &t.slots[cd.slot]
		items[i] = item{metas: slices.Clone(t.meta[s.first : s.first+s.n]), e: ests[s.ns], best: float32(math.Inf(-1))}
		at[cd.key] = i
		keys[i] = cd.key
	}
	dims := t.dims
	c.mu.RUnlock()
	err := fr.Fines(ctx, keys, func(k Key, b []byte) {
		i, ok := at[k]
		if !ok || items[i].e == nil {
			return
		}
		f, ok := decodeFinePart(b, dims)
		if !ok {
			return
		}
		it := &items[i]
		for j := range it.metas {
			it.best = max(it.best, it.e.estimateFine(&f, &it.metas[j]))
		}
		it.fines++
	})
	if err != nil {
		return false, err
	}
	for i := range cands {
		if it := &items[i]; it.fines == len(it.metas) && it.e != nil {
			cands[i].bound = it.best
		}
	}
	return true, nil
}
