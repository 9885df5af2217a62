package indexing

import (
	"fmt"
	"math"

	"github.com/memvault/memvault/store"
)

// Score is the similarity of a stored vector a to a query vector b under
// dist, higher meaning closer, exactly as LangGraph's Postgres store
// reports it: Cosine gives 1 - cosine distance (the cosine similarity,
// 0 when either vector is all zeros, where pgvector would give NaN), L2
// gives minus the Euclidean distance, InnerProduct the dot product. An
// empty dist means Cosine. Vectors of different lengths score over their
// common prefix; stores reject such vectors before scoring.
func Score(dist store.Distance, a, b []float32) float64 {
	n := min(len(a), len(b))
	a, b = a[:n], b[:n]
	switch dist {
	case store.L2:
		return -math.Sqrt(float64(sqDist(a, b)))
	case store.InnerProduct:
		return float64(dot(a, b))
	default:
		d, na, nb := dotNorms(a, b)
		if na == 0 || nb == 0 {
			return 0
		}
		return float64(d) / math.Sqrt(float64(na)*float64(nb))
	}
}

// QueryScorer scores many stored vectors against one query, with the
// query's norm computed once and the stored vectors' norms given by the
// caller (see VectorNorm), so that a cosine costs one dot product.
type QueryScorer struct {
	dist  store.Distance
	q     []float32
	qnorm float64
}

// NewQueryScorer prepares scoring against q under dist ("" is Cosine).
func NewQueryScorer(dist store.Distance, q []float32) *QueryScorer {
	return &QueryScorer{dist: dist, q: q, qnorm: VectorNorm(q)}
}

// Score is Score(dist, v, q) given norm = VectorNorm(v).
func (s *QueryScorer) Score(v []float32, norm float64) float64 {
	n := min(len(v), len(s.q))
	v, q := v[:n], s.q[:n]
	switch s.dist {
	case store.L2:
		return -math.Sqrt(float64(sqDist(v, q)))
	case store.InnerProduct:
		return float64(dot(v, q))
	default:
		if norm == 0 || s.qnorm == 0 {
			return 0
		}
		return float64(dot(v, q)) / (norm * s.qnorm)
	}
}

// VectorNorm is the Euclidean norm of v.
func VectorNorm(v []float32) float64 {
	return math.Sqrt(float64(dot(v, v)))
}

// ValidateDistance returns ErrInvalidArgument for an unknown distance.
func ValidateDistance(d store.Distance) error {
	if !d.Valid() {
		return fmt.Errorf("%w: unknown distance %q", store.ErrInvalidArgument, d)
	}
	return nil
}
