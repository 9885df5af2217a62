package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/memvault/memvault/store/internal/indexing"
	"github.com/memvault/memvault/store/internal/vecindex"

	"github.com/memvault/memvault/store"
)

// candidate is an item with vectors and its best score.
type candidate = vecindex.Scored

// search runs one search in tx. Without a query vector it lists items by
// updated_at descending (then namespace and key); with one it scans every
// stored vector under the prefix, scores it (against the query in the
// vector's space: see package spaces), keeps each item's best field, and
// returns scored items by score, then unscored items in the no-query
// order, offset and limit applying to that combined list. Vectors of a
// data subject whose keys are gone score nothing, and their items are
// left out (their values no longer decrypt either).
func (s *Store) search(ctx context.Context, tx *sql.Tx, st *readStmts, prefix store.Namespace, opt store.SearchOptions, query []float32, now time.Time, refreshes *[]refreshKey) ([]store.SearchItem, error) {
	need := opt.Offset + opt.EffectiveLimit()
	refresh := s.b.Refresh(opt.RefreshTTL)
	out := make([]store.SearchItem, 0, min(opt.EffectiveLimit(), 1024))
	seen := 0
	// take handles an item in list order; it reports false when the page
	// is full.
	take := func(r itemRow, score *float64) (bool, error) {
		if seen >= need {
			return false, nil
		}
		var v map[string]any
		if len(opt.Filter) > 0 {
			var err error
			if v, err = s.decodeValue(ctx, r.k.NS, r.k.Key, r.value); err != nil {
				return false, fmt.Errorf("item %q/%q: %w", r.k.NS, r.k.Key, err)
			}
			if !matches(v, opt.Filter) {
				return true, nil
			}
		}
		seen++
		if seen <= opt.Offset {
			return seen < need, nil
		}
		it, err := s.item(ctx, r, v, now, refresh, refreshes)
		if err != nil {
			return false, err
		}
		out = append(out, store.SearchItem{Item: *it, Score: score})
		return seen < need, nil
	}

	if query != nil {
		qs, err := s.newQueries(ctx, prefix, query)
		if err != nil {
			return nil, err
		}
		var src ranked = &exactRanked{} // nil qs: nothing can be scored
		if qs != nil {
			if src, err = s.ranked(ctx, tx, st, prefix, qs, need, now); err != nil {
				return nil, err
			}
		}
		// Fetch the ranked items in chunks until the page is full.
		for more := true; more; {
			part, err := src.next(ctx, min(max(2*(need-seen), 32), 400))
			if err != nil {
				return nil, err
			}
			if len(part) == 0 {
				break
			}
			rows, err := s.fetch(ctx, tx, part, now)
			if err != nil {
				return nil, err
			}
			for _, c := range part {
				r, ok := rows[c.Key]
				if !ok {
					continue
				}
				score := c.Score
				if more, err = take(r, &score); err != nil {
					return nil, err
				}
				if !more {
					break
				}
			}
		}
		if seen >= need {
			return out, nil
		}
	}

	cond, args := prefixCond("prefix", prefix)
	q := `SELECT ` + itemColumns + ` FROM store WHERE ` + cond + ` AND (expires_at IS NULL OR expires_at > ?)`
	args = append(args, now.UnixNano())
	if query != nil {
		q += ` AND NOT EXISTS (SELECT 1 FROM store_vectors v WHERE v.prefix = store.prefix AND v.key = store.key)`
	}
	q += ` ORDER BY updated_at DESC, prefix, key`
	if len(opt.Filter) == 0 {
		// Without a Go-side filter SQL can page.
		skip := max(opt.Offset-seen, 0)
		q += ` LIMIT ? OFFSET ?`
		args = append(args, need-seen-skip, skip)
		seen += skip
	}
	rs, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	for rs.Next() {
		r, err := scanItem(rs)
		if err != nil {
			return nil, err
		}
		more, err := take(r, nil)
		if err != nil {
			return nil, err
		}
		if !more {
			break
		}
	}
	return out, rs.Err()
}

// ranked yields a search's scored items best first, a part at a time.
type ranked interface {
	// next returns up to want more items (none when there are no more).
	next(ctx context.Context, want int) ([]candidate, error)
}

// exactRanked is every scored item, sorted lazily: the best few first,
// the rest only if the page needs them.
type exactRanked struct {
	cands         []candidate
	sorted, start int
}

func newExactRanked(cands []candidate, need int) *exactRanked {
	// Rank only the best few unless the filter rejects many of them.
	r := &exactRanked{cands: cands, sorted: min(len(cands), max(4*need, 64))}
	vecindex.TopK(cands, r.sorted, vecindex.CompareScored)
	return r
}

func (r *exactRanked) next(_ context.Context, want int) ([]candidate, error) {
	if r.start >= len(r.cands) {
		return nil, nil
	}
	if r.start >= r.sorted {
		slices.SortFunc(r.cands[r.sorted:], vecindex.CompareScored)
		r.sorted = len(r.cands)
	}
	n := min(r.sorted-r.start, want)
	part := r.cands[r.start : r.start+n]
	r.start += n
	return part, nil
}

// quantRanked ranks with the code index: vecindex.Cache.Top finds the
// certain top (the exact ranking's first need items) by rescoring items
// from store_vectors in the order of their bounds; a page that needs more
// (a filter or expiries rejected some of them) gets the rest by one exact
// scan. It is the search's vecindex.Rescorer.
type quantRanked struct {
	s       *Store
	tx      *sql.Tx
	gen     int64
	prefix  string
	qs      *queries
	need    int
	started bool
	buf     []candidate
	exact   *exactRanked // the rest by exact scan, once the index moved on
	// returned holds the certain top (handed out or in buf): the items
	// the index proved to be the exact ranking's first need.
	returned map[itemKey]bool
	now      time.Time
	ns       store.Namespace
}

// Estimator, Resolve, Rescore and Proxy make quantRanked the search's
// vecindex.Rescorer.
func (q *quantRanked) Estimator(ns string, centre []float32) (*vecindex.Estimator, bool) {
	return q.qs.Estimator(ns, centre)
}

func (q *quantRanked) Resolve(ctx context.Context, namespaces []string) error {
	return q.qs.resolveAll(ctx, namespaces)
}

func (q *quantRanked) Rescore(ctx context.Context, keys []itemKey) ([]candidate, error) {
	return q.s.rescore(ctx, q.tx, keys, q.qs)
}

func (q *quantRanked) Proxy(score float64) float32 { return q.qs.proxy(score) }

func (q *quantRanked) next(ctx context.Context, want int) ([]candidate, error) {
	if q.exact != nil {
		return q.exact.next(ctx, want)
	}
	if q.started && len(q.buf) == 0 {
		// The certain top is used up (a filter or expiries rejected some
		// of it): an item not rescored may still beat a rescored one
		// beyond the top, so the rest comes from one exact ranking.
		return q.exactRest(ctx, want)
	}
	if !q.started {
		top, ok, err := q.s.cache.Top(ctx, q.gen, q.prefix, q, q.need)
		if err != nil {
			return nil, err
		}
		if !ok {
			// This process wrote since the search's snapshot, or the
			// bounds were too loose.
			return q.exactRest(ctx, want)
		}
		q.started, q.buf = true, top
		q.returned = make(map[itemKey]bool, len(q.buf))
		for _, c := range q.buf {
			q.returned[c.Key] = true
		}
	}
	n := min(len(q.buf), want)
	part := q.buf[:n]
	q.buf = q.buf[n:]
	return part, nil
}

// exactRest ranks, by one exact scan, every item not handed out yet.
func (q *quantRanked) exactRest(ctx context.Context, want int) ([]candidate, error) {
	cands, err := q.s.scoreVectors(ctx, q.tx, q.ns, q.qs, q.now)
	if err != nil {
		return nil, err
	}
	// Called with buf empty: every item of returned was handed out.
	cands = slices.DeleteFunc(cands, func(c candidate) bool { return q.returned[c.Key] })
	q.exact = newExactRanked(cands, want)
	return q.exact.next(ctx, want)
}

// rescore reads the vectors of keys and returns their items scored
// exactly (each by its best field, in its space), in order.
func (s *Store) rescore(ctx context.Context, tx *sql.Tx, keys []itemKey, qs *queries) ([]candidate, error) {
	cands := make([]candidate, 0, len(keys))
	index := make(map[itemKey]int, len(keys)) // position in cands
	var buf []float32
	for start := 0; start < len(keys); start += 200 {
		part := keys[start:min(len(keys), start+200)]
		in, args := keysIn(part)
		rs, err := tx.QueryContext(ctx, `SELECT prefix, key, updated_at, embedding FROM store_vectors WHERE `+in, args...)
		if err != nil {
			return nil, err
		}
		var (
			ns, key, emb sql.RawBytes
			upd          int64
		)
		for rs.Next() {
			if err := rs.Scan(&ns, &key, &upd, &emb); err != nil {
				rs.Close()
				return nil, err
			}
			var ok bool
			if buf, ok = decodeVector(buf, emb); !ok || len(buf) != s.cache.Dims() {
				continue // as the index: not a vector of this configuration
			}
			sq, err := qs.resolve(ctx, ns)
			if err != nil {
				rs.Close()
				return nil, err
			}
			if sq == nil {
				continue // its subject's keys are gone
			}
			score := sq.sc.Score(buf, indexing.VectorNorm(buf))
			if n := len(cands); n > 0 && cands[n-1].Key.NS == string(ns) && cands[n-1].Key.Key == string(key) {
				cands[n-1].Score = max(cands[n-1].Score, score)
				continue
			}
			k := itemKey{NS: string(ns), Key: string(key)}
			if i, ok := index[k]; ok {
				cands[i].Score = max(cands[i].Score, score)
				continue
			}
			index[k] = len(cands)
			cands = append(cands, candidate{Key: k, Updated: upd, Score: score})
		}
		err = rs.Err()
		rs.Close()
		if err != nil {
			return nil, err
		}
	}
	slices.SortFunc(cands, vecindex.CompareScored)
	return cands, nil
}

// ranked ranks the items under prefix with vectors against query: by the
// exact in-process copy when the store is small enough to hold one
// (floatCache), by the code index when it is enabled and can serve the
// transaction's snapshot, by an exact scan of SQLite otherwise.
func (s *Store) ranked(ctx context.Context, tx *sql.Tx, st *readStmts, prefix store.Namespace, qs *queries, need int, now time.Time) (ranked, error) {
	if s.floats.enabled() && qs.dims == s.floats.dims {
		q, err := readQuantState(ctx, tx, st)
		if err != nil {
			return nil, err
		}
		cands, ok, err := s.floats.candidates(ctx, tx, q.Gen, prefix.String(), qs)
		if err != nil {
			return nil, err
		}
		if ok {
			return newExactRanked(cands, need), nil
		}
	}
	if s.cache.Enabled() && qs.dims == s.cache.Dims() {
		q, err := readQuantState(ctx, tx, st)
		if err != nil {
			return nil, err
		}
		if q.CodesGen == q.Gen {
			ok, err := s.cache.Refresh(ctx, txSource{tx}, q)
			if err != nil {
				return nil, err
			}
			if ok {
				return &quantRanked{s: s, tx: tx, gen: q.Gen, prefix: prefix.String(), qs: qs,
					need: max(need, 1), now: now, ns: prefix}, nil
			}
		}
	}
	cands, err := s.scoreVectors(ctx, tx, prefix, qs, now)
	if err != nil {
		return nil, err
	}
	return newExactRanked(cands, need), nil
}

// scoreVectors scores every vector under prefix against the query in its
// space and returns one candidate per item with its best score.
func (s *Store) scoreVectors(ctx context.Context, tx *sql.Tx, prefix store.Namespace, qs *queries, now time.Time) ([]candidate, error) {
	cond, args := prefixCond("v.prefix", prefix)
	q := `SELECT v.prefix, v.key, v.updated_at, v.embedding FROM store_vectors v WHERE ` + cond
	if s.mayExpire() {
		q = `SELECT v.prefix, v.key, v.updated_at, v.embedding FROM store_vectors v
			JOIN store s ON s.prefix = v.prefix AND s.key = v.key
			WHERE ` + cond + ` AND (s.expires_at IS NULL OR s.expires_at > ?)`
		args = append(args, now.UnixNano())
	}
	rs, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var (
		cands []candidate
		index = map[itemKey]int{} // position in cands
		buf   []float32
		ns    sql.RawBytes
		key   sql.RawBytes
		upd   int64
		emb   sql.RawBytes
	)
	for rs.Next() {
		if err := rs.Scan(&ns, &key, &upd, &emb); err != nil {
			return nil, err
		}
		var ok bool
		if buf, ok = decodeVector(buf, emb); !ok {
			continue // not float32s: not a vector this store wrote
		}
		sq, err := qs.resolve(ctx, ns)
		if err != nil {
			return nil, err
		}
		if sq == nil {
			continue // its subject's keys are gone
		}
		score := sq.sc.Score(buf, indexing.VectorNorm(buf))
		// The rows of one item usually arrive together (primary key
		// order): compare with the last candidate before building keys.
		if n := len(cands); n > 0 && cands[n-1].Key.NS == string(ns) && cands[n-1].Key.Key == string(key) {
			cands[n-1].Score = max(cands[n-1].Score, score)
			continue
		}
		k := itemKey{NS: string(ns), Key: string(key)}
		if i, ok := index[k]; ok {
			cands[i].Score = max(cands[i].Score, score)
			continue
		}
		index[k] = len(cands)
		cands = append(cands, candidate{Key: k, Updated: upd, Score: score})
	}
	return cands, rs.Err()
}

// fetch loads the rows of the candidates' items.
func (s *Store) fetch(ctx context.Context, tx *sql.Tx, cands []candidate, now time.Time) (map[itemKey]itemRow, error) {
	keys := make([]itemKey, len(cands))
	for i, c := range cands {
		keys[i] = c.Key
	}
	in, args := keysIn(keys)
	args = append(args, now.UnixNano())
	rs, err := tx.QueryContext(ctx, `SELECT `+itemColumns+` FROM store WHERE `+in+` AND (expires_at IS NULL OR expires_at > ?)`, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	out := make(map[itemKey]itemRow, len(cands))
	for rs.Next() {
		r, err := scanItem(rs)
		if err != nil {
			return nil, err
		}
		out[r.k] = r
	}
	return out, rs.Err()
}

// keysIn returns the condition "(prefix, key) IN (VALUES (?, ?), ...)"
// for keys, with its arguments: one statement reads a batch of items.
// Callers bound the batch (SQLite allows 32 766 parameters).
func keysIn(keys []itemKey) (string, []any) {
	var q strings.Builder
	q.WriteString(`(prefix, key) IN (VALUES `)
	args := make([]any, 0, 2*len(keys))
	for i, k := range keys {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(?, ?)")
		args = append(args, k.NS, k.Key)
	}
	q.WriteString(")")
	return q.String(), args
}
