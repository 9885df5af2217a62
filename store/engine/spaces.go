package engine

import (
	"context"
	"slices"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/internal/indexing"
	"github.com/memvault/memvault/store/internal/items"
	"github.com/memvault/memvault/store/internal/spaces"
	"github.com/memvault/memvault/store/vecindex"
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

// queries is a search's query in every vector space it meets: one space (a
// store without subjects' spaces, a search under one subject's namespace
// or under none) or one per subject (a search whose prefix spans several
// subjects). It belongs to one search: not safe for concurrent use.
type queries struct {
	q    *spaces.Query
	one  *spaceQuery                   // one space; nil with several
	per  *spaces.PerSpace[*spaceQuery] // several spaces
	nq   float64                       // |q|, the same in every space
	dims int
	dist store.Distance
}

// newQueries returns the queries of a search under prefix whose query
// vector (in the shared space) is base, or nil when the search meets only
// the space of a subject whose keys are gone: nothing can be scored.
func newQueries(ctx context.Context, b *items.Base, prefix store.Namespace, base []float32) (*queries, error) {
	dist := b.Index.Distance
	q := b.Spaces.NewQuery(base)
	vec, single, err := q.Single(ctx, prefix)
	if err != nil {
		return nil, err
	}
	qs := &queries{q: q, nq: indexing.VectorNorm(base), dims: len(base), dist: dist}
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
func (qs *queries) resolve(ctx context.Context, ns string) (*spaceQuery, error) {
	if qs.one != nil {
		return qs.one, nil
	}
	sq, ok, err := qs.per.Resolve(ctx, ns)
	if err != nil || !ok {
		return nil, err
	}
	return sq, nil
}

// Estimator is the estimator of namespace ns's space for the code index
// (vecindex.Queries): it reads no keys; known is false when the search
// has not met ns's space yet (the index then asks Resolve, outside its
// lock).
func (qs *queries) Estimator(ns string, centre []float32) (*vecindex.Estimator, bool) {
	sq := qs.one
	if sq == nil {
		var ok, known bool
		if sq, ok, known = qs.per.Lookup(ns); !known || !ok {
			return nil, known
		}
	}
	if sq.est == nil || !slices.Equal(sq.centre, centre) {
		sq.est, sq.centre = vecindex.NewEstimator(qs.dist, sq.vec, centre), centre
	}
	return sq.est, true
}

// Resolve resolves the spaces of namespaces (vecindex.Rescorer).
func (qs *queries) Resolve(ctx context.Context, namespaces []string) error {
	for _, ns := range namespaces {
		if _, err := qs.resolve(ctx, ns); err != nil {
			return err
		}
	}
	return nil
}

// Proxy maps an exact score to the scale of the estimates
// (vecindex.Rescorer); it is the same in every space, which keeps norms.
func (qs *queries) Proxy(score float64) float32 {
	if qs.dist == store.L2 {
		nq := float32(qs.nq)
		return nq*nq - float32(score*score)
	}
	return float32(score)
}
