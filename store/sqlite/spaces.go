package sqlite

import (
	"context"
	"slices"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/internal/indexing"
	"github.com/memvault/memvault/store/internal/spaces"
	"github.com/memvault/memvault/store/internal/vecindex"
)

// spaceQuery is a search's query in one vector space (see package
// spaces): its vector, exact scorer and, once the code index asks, the
// estimator of its codes.
type spaceQuery struct {
	vec    []float32
	sc     *indexing.QueryScorer
	est    *vecindex.Estimator
	centre []float32 // the centre est was made for
}

func newSpaceQuery(dist store.Distance, vec []float32) *spaceQuery {
	return &spaceQuery{vec: vec, sc: indexing.NewQueryScorer(dist, vec)}
}

// estimator returns the estimator of codes made around centre.
func (q *spaceQuery) estimator(dist store.Distance, centre []float32) *vecindex.Estimator {
	if q.est == nil || !slices.Equal(q.centre, centre) {
		q.est, q.centre = vecindex.NewEstimator(dist, q.vec, centre), centre
	}
	return q.est
}

// Estimator is the estimator of namespace ns's space for the index
// (vecindex.Queries): it reads no keys.
func (qs *queries) Estimator(ns string, centre []float32) (*vecindex.Estimator, bool) {
	sq, known := qs.lookup(ns)
	if !known || sq == nil {
		return nil, known
	}
	return sq.estimator(qs.dist, centre), true
}

// queries is a search's query in every space it meets: one space (a
// store without subjects' spaces, a search under one subject's namespace
// or under none) or one per subject (a search whose prefix spans several
// subjects). It belongs to one search: not safe for concurrent use.
type queries struct {
	one  *spaceQuery                   // one space; nil with several
	per  *spaces.PerSpace[*spaceQuery] // several spaces
	nq   float64                       // |q|, the same in every space
	dims int
	dist store.Distance
}

// newQueries returns the queries of a search under prefix whose query
// vector (in the shared space) is base, or nil when the search meets only
// the space of a subject whose keys are gone: nothing can be scored.
func (s *Store) newQueries(ctx context.Context, prefix store.Namespace, base []float32) (*queries, error) {
	dist := s.index.Distance
	q := s.b.Spaces.NewQuery(base)
	vec, single, err := q.Single(ctx, prefix)
	if err != nil {
		return nil, err
	}
	qs := &queries{nq: indexing.VectorNorm(base), dims: len(base), dist: dist}
	switch {
	case !single:
		qs.per = spaces.NewPerSpace(q, func(v []float32) *spaceQuery { return newSpaceQuery(dist, v) })
	case vec == nil:
		return nil, nil
	default:
		qs.one = newSpaceQuery(dist, vec)
	}
	return qs, nil
}

// resolve returns the query in the space of namespace ns (nil: skip its
// vectors, their subject's keys are gone), reading keys when it must.
func (qs *queries) resolve(ctx context.Context, ns []byte) (*spaceQuery, error) {
	if qs.one != nil {
		return qs.one, nil
	}
	sq, ok, err := qs.per.ResolveBytes(ctx, ns)
	if err != nil || !ok {
		return nil, err
	}
	return sq, nil
}

// lookup returns the query of namespace ns's space as resolve found it,
// without reading keys; known is false when it has not met ns (the caller
// then resolves it outside its locks and tries again).
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

// resolveAll resolves the spaces of namespaces, outside any lock.
func (qs *queries) resolveAll(ctx context.Context, namespaces []string) error {
	for _, ns := range namespaces {
		if _, err := qs.resolve(ctx, []byte(ns)); err != nil {
			return err
		}
	}
	return nil
}

// proxy maps an exact score to the scale of the estimates (see
// estimator.proxy); it is the same in every space, which keeps norms.
func (qs *queries) proxy(score float64) float32 {
	if qs.dist == store.L2 {
		nq := float32(qs.nq)
		return nq*nq - float32(score*score)
	}
	return float32(score)
}
