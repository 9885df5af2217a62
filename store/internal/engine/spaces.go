package engine

import (
	"context"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/internal/indexing"
	"github.com/memvault/memvault/store/internal/items"
	"github.com/memvault/memvault/store/internal/spaces"
)

// queries is a search's query in every vector space it meets: one space (a
// store without subjects' spaces, a search under one subject's namespace
// or under none) or one per subject (a search whose prefix spans several
// subjects). It belongs to one search: not safe for concurrent use.
type queries struct {
	one *indexing.QueryScorer                   // one space; nil with several
	per *spaces.PerSpace[*indexing.QueryScorer] // several spaces
}

// newQueries returns the queries of a search under prefix whose query
// vector (in the shared space) is base, or nil when the search meets only
// the space of a subject whose keys are gone: nothing can be scored.
func newQueries(ctx context.Context, b *items.Base, prefix store.Namespace, base []float32) (*queries, error) {
	dist := b.Index.Distance
	q := b.Spaces.NewQuery(base)
	vec, single, err := q.Single(ctx, prefix)
	switch {
	case err != nil:
		return nil, err
	case !single:
		return &queries{per: spaces.NewPerSpace(q, func(v []float32) *indexing.QueryScorer { return indexing.NewQueryScorer(dist, v) })}, nil
	case vec == nil:
		return nil, nil
	}
	return &queries{one: indexing.NewQueryScorer(dist, vec)}, nil
}

// resolve returns the scorer of namespace ns's space (nil: skip its
// vectors, their subject's keys are gone), reading keys when it must.
func (qs *queries) resolve(ctx context.Context, ns string) (*indexing.QueryScorer, error) {
	if qs.one != nil {
		return qs.one, nil
	}
	sc, ok, err := qs.per.Resolve(ctx, ns)
	if err != nil || !ok {
		return nil, err
	}
	return sc, nil
}
