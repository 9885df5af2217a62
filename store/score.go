package store

import (
	"fmt"
	"math"
)

// Score is the similarity of a stored vector a to a query vector b under
// dist, higher meaning closer, exactly as LangGraph's Postgres store
// reports it: Cosine gives 1 - cosine distance (the cosine similarity,
// 0 when either vector is all zeros, where pgvector would give NaN), L2
// gives minus the Euclidean distance, InnerProduct the dot product. An
// empty dist means Cosine. Vectors of different lengths score over their
// common prefix; stores reject such vectors before scoring.
func Score(dist Distance, a, b []float32) float64 {
	n := min(len(a), len(b))
	a, b = a[:n], b[:n]
	switch dist {
	case L2:
		return -math.Sqrt(float64(sqDist(a, b)))
	case InnerProduct:
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
	dist  Distance
	q     []float32
	qnorm float64
}

// NewQueryScorer prepares scoring against q under dist ("" is Cosine).
func NewQueryScorer(dist Distance, q []float32) *QueryScorer {
	return &QueryScorer{dist: dist, q: q, qnorm: VectorNorm(q)}
}

// Score is Score(dist, v, q) given norm = VectorNorm(v).
func (s *QueryScorer) Score(v []float32, norm float64) float64 {
	n := min(len(v), len(s.q))
	v, q := v[:n], s.q[:n]
	switch s.dist {
	case L2:
		return -math.Sqrt(float64(sqDist(v, q)))
	case InnerProduct:
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

// Valid reports whether d is a known distance (or empty, meaning Cosine).
func (d Distance) Valid() bool {
	switch d {
	case "", Cosine, L2, InnerProduct:
		return true
	}
	return false
}

// ValidateDistance returns ErrInvalidArgument for an unknown distance.
func ValidateDistance(d Distance) error {
	if !d.Valid() {
		return fmt.Errorf("%w: unknown distance %q", ErrInvalidArgument, d)
	}
	return nil
}

// dot accumulates in float32 like pgvector, four lanes at a time.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

func sqDist(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		d0, d1, d2, d3 := a[i]-b[i], a[i+1]-b[i+1], a[i+2]-b[i+2], a[i+3]-b[i+3]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < len(a); i++ {
		d := a[i] - b[i]
		s0 += d * d
	}
	return s0 + s1 + s2 + s3
}

func dotNorms(a, b []float32) (d, na, nb float32) {
	b = b[:len(a)]
	var d1, na1, nb1 float32
	i := 0
	for ; i+2 <= len(a); i += 2 {
		x0, y0, x1, y1 := a[i], b[i], a[i+1], b[i+1]
		d += x0 * y0
		na += x0 * x0
		nb += y0 * y0
		d1 += x1 * y1
		na1 += x1 * x1
		nb1 += y1 * y1
	}
	for ; i < len(a); i++ {
		d += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	return d + d1, na + na1, nb + nb1
}
