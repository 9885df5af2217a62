package engine

import (
	"context"
	"slices"
	"time"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/internal/filtering"
	"github.com/memvault/memvault/store/internal/items"
	"github.com/memvault/memvault/store/vecindex"
)

// ANNTx is what a transaction of a driver that declares
// store.DriverCaps.ANN offers the engine beyond store.DriverTx: the
// storage's own approximate nearest-neighbour query (pgvector's HNSW or
// IVFFlat index, or its exact scan of a flat table). The driver runs the
// query; the engine owns the policy around it: how many candidates to ask
// for, when a page is settled, when to widen and when to fall back to its
// exact ranking (the rounds of Engine.search over DriverTx.Vectors).
type ANNTx interface {
	// Nearest returns the q.N stored vectors under q.Prefix nearest to
	// q.Vector by the storage's index (approximate: some may be missed),
	// one candidate per vector, with the vector's score (as
	// store.SearchItem.Score) and its row's Updated. A candidate's Row is
	// set only when the row is live at q.Now and, with q.Filter, matches
	// it in the storage's terms (the engine checks it again). got is how
	// many vectors the storage returned before dropping any it cannot
	// score (a NULL vector): fewer than q.N means it has no more.
	Nearest(ctx context.Context, q ANNQuery) (cands []Candidate, got int, err error)
}

// ScoreTx is a transaction of a driver that scores vectors itself
// (PostgreSQL: pgvector's distance operators), so that a search's exact
// ranking scores as its ANN does (pgvector's single-precision arithmetic
// differs from the engine's in the last digits, which would reorder near
// ties between pages) and reads one score per item instead of every
// vector.
type ScoreTx interface {
	// Scores calls fn once per live item under prefix that has vectors,
	// with its best score (as Nearest's) against the query in its vector
	// space, and its Updated; items whose space q has no query for (a
	// data subject whose keys are gone) are left out. Only the first
	// limit items of the ranking (vecindex.CompareScored: best score, then
	// newest, then namespace and key in byte order) are needed, in any
	// order: the storage cuts the rest.
	Scores(ctx context.Context, prefix store.Namespace, q SpaceQueries, now time.Time, limit int, fn func(vecindex.Scored)) error
}

// SpaceQueries is a search's query in each vector space it meets (see
// package spaces).
type SpaceQueries struct {
	// Shared is the query in the shared space: of every namespace when
	// SubjectPrefix is nil, else of those not under it.
	Shared []float32
	// SubjectPrefix is the namespace prefix whose next label names a
	// data subject; Subjects maps each subject under the search's prefix
	// to the query in its space, nil when its keys are gone.
	SubjectPrefix store.Namespace
	Subjects      map[string][]float32
}

// spaceQueries returns qs for a driver that scores itself, reading the
// namespaces under prefix to find the subjects a search spanning several
// spaces meets.
func (qs *queries) spaceQueries(ctx context.Context, tx store.DriverTx, prefix store.Namespace, now time.Time) (SpaceQueries, error) {
	if qs.one != nil {
		return SpaceQueries{Shared: qs.one.vec}, nil
	}
	all, err := tx.Namespaces(ctx, prefix, now)
	if err != nil {
		return SpaceQueries{}, err
	}
	sq := SpaceQueries{SubjectPrefix: qs.q.SubjectPrefix(), Subjects: map[string][]float32{}}
	if sq.Shared, err = qs.q.Vector(ctx, ""); err != nil {
		return sq, err
	}
	for _, ns := range all {
		subject := qs.q.Subject(ns.String())
		if _, ok := sq.Subjects[subject]; !ok && subject != "" {
			if sq.Subjects[subject], err = qs.q.Vector(ctx, subject); err != nil {
				return sq, err
			}
		}
	}
	return sq, nil
}

// ANNQuery is one query of ANNTx.Nearest.
type ANNQuery struct {
	Prefix store.Namespace
	Vector []float32
	N      int
	// Widen: a query of a search that asked before and found too few
	// candidates under its prefix; the storage may search harder
	// (pgvector's iterative index scans).
	Widen bool
	// Filter is the search's filter when the engine pushes it down (see
	// FilterTx); nil otherwise.
	Filter map[string]any
	Now    time.Time
}

// Candidate is one vector Nearest found: its item, score and row.
type Candidate struct {
	vecindex.Scored
	// Row is the item's row; nil when it is expired or fails the filter.
	Row *store.Row
}

// ANNPolicy is how a driver's ANN is asked, which it declares with
// DriverCaps.ANN by implementing ANNDriver.
type ANNPolicy struct {
	// MaxCandidates bounds a query (pgvector: hnsw.ef_search's 1000); a
	// page that needs more is ranked exactly.
	MaxCandidates int
	// PerItem is how many vectors an item is expected to have.
	PerItem int
	// Exhaustive: every query reads every vector under its prefix (no
	// index), so widening asks for MaxCandidates at once.
	Exhaustive bool
}

// ANNDriver is a driver that declares DriverCaps.ANN.
type ANNDriver interface {
	ANNPolicy() ANNPolicy
}

// ExactSearches reports how many searches of e its driver's ANN could not
// settle, which were ranked exactly (for tests). A function, not a method,
// so that it does not become one of the stores that embed an Engine.
func ExactSearches(e *Engine) int64 { return e.exact.Load() }

// ann runs a search with a query through the driver's ANN when it has one
// and the search meets one vector space (a search spanning several data
// subjects' spaces is ranked exactly: the index orders by distance to one
// vector). ok is false when the search is not settled this way and the
// caller ranks exactly; refreshes of the items then go nowhere.
//
// The policy: ask for enough candidates to fill offset+limit items (one
// more than the page, so that an item tied with its last one shows; slack
// when a filter or expiries may drop some; twice the vectors per item when
// items have several, since an item counts once, by its best vector); rank
// them (ties as the exact ranking orders them), page them, and accept the
// page when its last score beats the farthest candidate's. Otherwise ask
// again for four times as many, widening, until the storage has no more
// or the bound is reached: then rank exactly.
func (e *Engine) ann(ctx context.Context, tx store.DriverTx, prefix store.Namespace, opt store.SearchOptions, qs *queries, filter *filtering.Filter, now time.Time, refreshTTL bool, refreshes *[]refresh) (page []store.SearchItem, ok bool, err error) {
	ad, isANN := e.d.(ANNDriver)
	atx, isTx := tx.(ANNTx)
	if !e.caps.ANN || !isANN || !isTx || qs == nil || qs.one == nil {
		return nil, false, nil
	}
	pol := ad.ANNPolicy()
	limit, offset := opt.EffectiveLimit(), opt.Offset
	if offset+limit >= pol.MaxCandidates {
		e.exact.Add(1)
		return nil, false, nil // more than the index serves
	}
	n := min(annCandidates(offset+limit, pol.PerItem, len(opt.Filter) > 0 || e.b.TTL != nil), pol.MaxCandidates)
	first := n
	q := ANNQuery{Prefix: prefix, Vector: qs.one.vec, Now: now}
	if e.pushdown(opt.Filter) {
		q.Filter = opt.Filter
	}
	for {
		q.N, q.Widen = n, len(prefix) > 0 && n > first
		cands, got, err := atx.Nearest(ctx, q)
		if err != nil {
			return nil, false, err
		}
		sortCandidates(cands)
		var rs []refresh
		page = make([]store.SearchItem, 0, min(limit, len(cands)))
		seen := make(map[store.RowKey]bool, len(cands))
		matched := 0
		for i := range cands {
			c := &cands[i]
			if seen[c.Key] {
				continue // an item counts once, by its best vector
			}
			seen[c.Key] = true
			if c.Row == nil || items.Expired(c.Row.Expires, now) {
				continue
			}
			var v map[string]any
			if len(opt.Filter) > 0 {
				if v, err = e.open(ctx, c.Row); err != nil {
					return nil, false, err
				}
				if !filter.Match(v) {
					continue
				}
			}
			if matched++; matched <= offset {
				continue
			}
			it, err := e.item(ctx, c.Row, v, now, refreshTTL, &rs)
			if err != nil {
				return nil, false, err
			}
			score := c.Score
			page = append(page, store.SearchItem{Item: it, Score: &score})
			if len(page) == limit {
				break
			}
		}
		if len(page) == limit {
			// Items tied with the page's last one may lie beyond the
			// candidates: settled when its score beats the farthest
			// candidate's. A tie (the same memory stored twice) asks for
			// more candidates first, rather than ranking exactly at once.
			if *page[limit-1].Score > cands[len(cands)-1].Score {
				*refreshes = append(*refreshes, rs...)
				return page, true, nil
			}
			if got < n || n >= pol.MaxCandidates {
				e.exact.Add(1)
				return nil, false, nil
			}
			n = min(4*n, pol.MaxCandidates)
			continue
		}
		if got < n || n >= pol.MaxCandidates {
			e.exact.Add(1)
			return nil, false, nil // the index has no more
		}
		n = min(4*n, pol.MaxCandidates)
		if pol.Exhaustive {
			n = pol.MaxCandidates
		}
	}
}

// annCandidates is how many vectors the first ANN query asks for to fill
// items items (see Engine.ann).
func annCandidates(items, perItem int, filtered bool) int {
	slack := 1
	if filtered {
		slack = 10
	}
	if perItem <= 1 {
		return items + slack
	}
	return items*perItem*2 + slack
}

// sortCandidates orders candidates best first, ties as the exact ranking.
func sortCandidates(cs []Candidate) {
	slices.SortFunc(cs, func(a, b Candidate) int { return vecindex.CompareScored(a.Scored, b.Scored) })
}
