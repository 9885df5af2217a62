package sqlite

import (
	"math"

	"github.com/memvault/memvault/store"
)

// scorer scores stored vectors against one query with store.Score's
// semantics, the query's norm computed once.
type scorer struct {
	dist  store.Distance
	q     []float32
	qnorm float64 // sqrt(q·q), for cosine
}

func newScorer(dist store.Distance, q []float32) *scorer {
	s := &scorer{dist: dist, q: q}
	if dist == store.Cosine || dist == "" {
		s.qnorm = math.Sqrt(float64(dot(q, q)))
	}
	return s
}

// score returns the similarity of the stored vector v (higher is closer).
func (s *scorer) score(v []float32) float64 {
	if len(v) != len(s.q) {
		return store.Score(s.dist, v, s.q)
	}
	switch s.dist {
	case store.L2:
		return -math.Sqrt(float64(sqDist(v, s.q)))
	case store.InnerProduct:
		return float64(dot(v, s.q))
	default:
		d, nv := dotNorm(v, s.q)
		if nv == 0 || s.qnorm == 0 {
			return 0
		}
		return float64(d) / (math.Sqrt(float64(nv)) * s.qnorm)
	}
}

// scoreNorm is score for a vector whose norm (sqrt(v·v)) is known.
func (s *scorer) scoreNorm(v []float32, nv float32) float64 {
	if len(v) != len(s.q) || (s.dist != store.Cosine && s.dist != "") {
		return s.score(v)
	}
	if nv == 0 || s.qnorm == 0 {
		return 0
	}
	return float64(dot(v, s.q)) / (float64(nv) * s.qnorm)
}

// norm returns sqrt(v·v).
func norm(v []float32) float32 {
	return float32(math.Sqrt(float64(dot(v, v))))
}

// dot accumulates in float32 like pgvector, eight lanes at a time. len(b)
// must be at least len(a).
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
		s4 += a[i+4] * b[i+4]
		s5 += a[i+5] * b[i+5]
		s6 += a[i+6] * b[i+6]
		s7 += a[i+7] * b[i+7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7)
}

// dotNorm returns a·b and a·a in one pass.
func dotNorm(a, b []float32) (d, na float32) {
	b = b[:len(a)]
	var d0, d1, d2, d3, n0, n1, n2, n3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		a0, a1, a2, a3 := a[i], a[i+1], a[i+2], a[i+3]
		d0 += a0 * b[i]
		d1 += a1 * b[i+1]
		d2 += a2 * b[i+2]
		d3 += a3 * b[i+3]
		n0 += a0 * a0
		n1 += a1 * a1
		n2 += a2 * a2
		n3 += a3 * a3
	}
	for ; i < len(a); i++ {
		d0 += a[i] * b[i]
		n0 += a[i] * a[i]
	}
	return (d0 + d1) + (d2 + d3), (n0 + n1) + (n2 + n3)
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
	return (s0 + s1) + (s2 + s3)
}
