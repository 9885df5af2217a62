package vecindex

import (
	"cmp"
	"context"
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

// RescoreBatch is how many items Top reads and scores exactly at a
// time; MaxBounded bounds the items it ranks by bound per scan of the
// index.
const (
	RescoreBatch = 64
	MaxBounded   = 4096
)

// Top returns the first need (≥ 1) items of the exact ranking of the
// items under prefix at generation gen: items are rescored (r.Rescore) in
// the order of their bounds, a batch at a time, until the next bound is
// below the need-th best exact score found, and the best need rescored
// are then the exact ranking's first. ok is false when the index cannot
// answer, and the caller ranks by exact scan instead: it does not hold
// gen (the caller's process wrote since its snapshot), or its bounds are
// too loose (past a tenth of the items, one exact scan is cheaper; codes
// of sparse vectors, as the offline hashing embedder's, bound loosely).
func (c *Cache) Top(ctx context.Context, gen int64, prefix string, r Rescorer, need int) (top []Scored, ok bool, err error) {
	need = max(need, 1)
	emitted := map[Key]bool{} // ranked by bound so far
	fill := func() (keys []Key, bounds []float32, left int, ok bool, err error) {
		var missing []string
		for range 2 {
			keys, bounds, left, missing, ok = c.Best(gen, prefix, r, min(MaxBounded, max(4*need, 256)), emitted)
			if !ok || len(missing) == 0 {
				break
			}
			// Spaces the search had not met: their queries are made
			// outside the index's lock (they may read keys), then it
			// ranks again.
			if err := r.Resolve(ctx, missing); err != nil {
				return nil, nil, 0, false, err
			}
		}
		if !ok || len(missing) > 0 {
			return nil, nil, 0, false, nil
		}
		for _, k := range keys {
			emitted[k] = true
		}
		return keys, bounds, left, true, nil
	}
	keys, bounds, total, ok, err := fill()
	if !ok || err != nil {
		return nil, false, err
	}
	more := total > len(keys)
	var got []Scored
	budget := max(512, total/10)
	for rescored := 0; len(keys) > 0; {
		if rescored >= budget {
			c.Stats.Abandoned.Add(1)
			return nil, false, nil
		}
		n := min(len(keys), RescoreBatch)
		part, err := r.Rescore(ctx, keys[:n])
		if err != nil {
			return nil, false, err
		}
		c.Stats.Rescored.Add(int64(n))
		rescored += n
		keys, bounds = keys[n:], bounds[n:]
		got = append(got, part...)
		slices.SortFunc(got, CompareScored)
		if len(got) >= need && len(bounds) > 0 && bounds[0] < r.Proxy(got[need-1].Score) {
			break
		}
		if len(keys) == 0 && more {
			var left int
			if keys, bounds, left, ok, err = fill(); !ok || err != nil {
				return nil, false, err
			}
			more = left > len(keys)
		}
	}
	return got[:min(len(got), need)], true, nil
}
