package vecindex

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"math/bits"
	"sync"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/store"
)

// A vector's code is its sign sketch: one bit per dimension, set when the
// dimension of u = v - c is positive, c being the store's centre (the mean
// of its vectors, kept by the storage; zero until set). The
// Hamming distance h between the codes of u and of w = q - c estimates the
// angle between them as π·h/d, so that, with the three norms kept beside
// the bits,
//
//	v·q = u·w + v·c + q·c - |c|² ≈ |u||w|cos(π·h/d) + v·c + q·c - |c|²
//
// estimates every distance: the inner product is this, the cosine this
// over |v||q|, and the L2 distance ranks as |v|² - 2·v·q. Estimates only
// choose which items to rescore exactly: a search returns exact scores.
// Centring matters because real embeddings share a large common component
// that would otherwise set most bits alike. The signs are taken after a
// fixed pseudo-random rotation of u (rotationFor: random signs,
// permutations and Walsh–Hadamard transforms, an
// embeddings.Rotation under a public seed), which makes each bit a random
// hyperplane's and π·h/d an unbiased angle estimate (SimHash) for any
// vectors: without it, the sparse vectors of the offline hashing embedder
// (most coordinates zero) got codes too alike to bound anything, and every
// search rescored nearly every item. The rotation is orthogonal, so norms
// and dot products, and the metadata below, are unchanged by it.

// Code blob layout (the storage's code of a vector, store/sqlitestore's
// store_vector_codes.code), little-endian:
//
//	byte 0     codeFormat
//	byte 1     flags (codeCentred: bits of v - c; otherwise of v)
//	bytes 2-13 float32 |v|, |u|, v·c
//	then       ceil(d/64) uint64 words of sign bits, bit i of word i/64
//	           for dimension i, padding bits zero
//
// Format 3 (codeFormatFine, what EncodeCode writes) is format 2's layout
// followed by the fine part (see fine.go); format 2 codes, written
// before it, are still read, and bound their vectors by the sign bits
// alone. The snapshot holds the format 2 part of every code.
const (
	codeFormat     = 2 // 1: signs of u itself, unrotated (read as no code; Open recodes)
	codeFormatFine = 3
	codeCentred    = 1
	codeHeader     = 14
)

// codeWords is the number of 64-bit words of a d-dimension code.
func codeWords(d int) int { return (d + 63) / 64 }

// CentreOf returns c when it can centre vectors of d dimensions, nil
// otherwise (no centre yet, or one of an earlier embedder's dimensions).
func CentreOf(c []float32, d int) []float32 {
	if len(c) != d || d == 0 {
		return nil
	}
	return c
}

// signBits sets dst (codeWords(len(v)) words) to the signs of R(v - c)
// (of R(v) when c is nil), R being rotationFor(len(v)), and returns
// R(v - c), |v - c|² and v·c.
func signBits(dst []uint64, v, c []float32) (r []float32, uu, vc float64) {
	clear(dst)
	if len(v) == 0 {
		return nil, 0, 0
	}
	u := make([]float32, len(v))
	for i, x := range v {
		f := float64(x)
		if c != nil {
			vc += f * float64(c[i])
			f -= float64(c[i])
		}
		uu += f * f
		u[i] = float32(f)
	}
	r, err := rotationFor(len(v)).Apply(u)
	if err != nil { // cannot happen: the rotation has len(v) dimensions
		panic(err)
	}
	for i, x := range r {
		if x > 0 {
			dst[i>>6] |= 1 << (uint(i) & 63)
		}
	}
	return r, uu, vc
}

// codeRotationSeed selects the codes' rotation. It is public on purpose:
// the rotation protects nothing (codes are derived from the stored
// vectors, which are stored beside them); it only spreads every vector
// over all dimensions before its signs are taken.
var codeRotationSeed = sha256.Sum256([]byte("memvault store/sqlitestore code rotation v2"))

// rotations caches one rotation per dimension count.
var rotations sync.Map // int → *embeddings.Rotation

// rotationFor returns the fixed rotation of d-dimension vectors.
func rotationFor(d int) *embeddings.Rotation {
	if r, ok := rotations.Load(d); ok {
		return r.(*embeddings.Rotation)
	}
	r, err := embeddings.NewRotation(codeRotationSeed[:], d)
	if err != nil { // cannot happen: a valid secret and d >= 1
		panic(err)
	}
	actual, _ := rotations.LoadOrStore(d, r)
	return actual.(*embeddings.Rotation)
}

// EncodeCode is the code blob of v under centre c (nil: uncentred).
func EncodeCode(v, c []float32) []byte {
	c = CentreOf(c, len(v))
	w := make([]uint64, codeWords(len(v)))
	r, uu, vc := signBits(w, v, c)
	var vv float64
	for _, x := range v {
		vv += float64(x) * float64(x)
	}
	b := make([]byte, codeHeader+8*len(w), codeHeader+8*len(w)+fineHeader+fineBytes(len(v)))
	b[0] = codeFormatFine
	if c != nil {
		b[1] = codeCentred
	}
	binary.LittleEndian.PutUint32(b[2:], math.Float32bits(float32(math.Sqrt(vv))))
	binary.LittleEndian.PutUint32(b[6:], math.Float32bits(float32(math.Sqrt(uu))))
	binary.LittleEndian.PutUint32(b[10:], math.Float32bits(float32(vc)))
	for i, x := range w {
		binary.LittleEndian.PutUint64(b[codeHeader+8*i:], x)
	}
	return appendFine(b, r)
}

// codeMeta is the per-vector part of a code beside its bits.
type codeMeta struct {
	nv, nu, vc float32 // |v|, |u|, v·c
	centred    bool
}

// decodeCode appends the bits of a code blob of d dimensions to words and
// returns its metadata; ok is false for a blob that is not such a code
// (another format, another dimension count, non-finite norms, padding
// bits set), which the caller skips.
func decodeCode(words []uint64, b []byte, d int) (_ []uint64, m codeMeta, ok bool) {
	n := codeWords(d)
	if d <= 0 || len(b) < 2 || b[1]&^codeCentred != 0 {
		return words, m, false
	}
	switch {
	case b[0] == codeFormat && len(b) == codeHeader+8*n:
	case b[0] == codeFormatFine && len(b) == codeHeader+8*n+fineHeader+fineBytes(d):
		// The fine part is read from the storage when a search needs it
		// (see fine.go), not held in memory.
	default:
		return words, m, false
	}
	m.centred = b[1]&codeCentred != 0
	m.nv = math.Float32frombits(binary.LittleEndian.Uint32(b[2:]))
	m.nu = math.Float32frombits(binary.LittleEndian.Uint32(b[6:]))
	m.vc = math.Float32frombits(binary.LittleEndian.Uint32(b[10:]))
	for _, f := range []float32{m.nv, m.nu, m.vc} {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return words, m, false
		}
	}
	if m.nv < 0 || m.nu < 0 {
		return words, m, false
	}
	if r := d & 63; r != 0 && binary.LittleEndian.Uint64(b[codeHeader+8*(n-1):])>>uint(r) != 0 {
		return words, m, false
	}
	for i := range n {
		words = append(words, binary.LittleEndian.Uint64(b[codeHeader+8*i:]))
	}
	return words, m, true
}

// boundSigmas is how many standard deviations of the angle estimate the
// upper bound of a code's score adds: the Hamming distance of d sign bits
// has standard deviation sqrt(d·p·(1-p)) when each bit differs with
// probability p = θ/π.
const boundSigmas = 4

// Estimator bounds the scores of codes against one query.
type Estimator struct {
	dist  store.Distance
	words int
	cos   []float32 // cosBound(d), shared: read only
	q     [2]queryCode
	nq    float32 // |q|
}

// queryCode is the query's side of the estimate for uncentred (0) and
// centred (1) codes.
type queryCode struct {
	bits []uint64
	nw   float32 // |w|
	off  float32 // q·c - |c|²
	// rot is R(w), the rotated query the fine codes are scored against
	// (see fine.go), and rotSum the sum of its coordinates.
	rot    []float32
	rotSum float64
	// plane is the sums of rot over the set bits of each byte value at
	// each byte of a middle part's bit plane (see mid.go), made at its
	// first use.
	planeOnce sync.Once
	plane     []float32
}

// cosBounds caches cosBound's tables by dimension count.
var cosBounds sync.Map // int → []float32

// cosBound is the upper bound of cos θ for each Hamming distance h = 0..d
// of d-bit codes: cos(max(0, π·h/d - margin)). It depends on d alone, so
// every estimator of d dimensions (one per query and vector space) shares
// one table.
func cosBound(d int) []float32 {
	if c, ok := cosBounds.Load(d); ok {
		return c.([]float32)
	}
	cos := make([]float32, d+1)
	for h := range cos {
		p := max(float64(h), 1) / float64(d)
		sd := math.Pi * math.Sqrt(p*(1-p)/float64(d))
		cos[h] = float32(math.Cos(max(0, math.Pi*float64(h)/float64(d)-boundSigmas*sd-math.Pi/float64(d))))
	}
	actual, _ := cosBounds.LoadOrStore(d, cos)
	return actual.([]float32)
}

// NewEstimator returns the estimator of query q under distance dist for
// codes made around centre c (nil: uncentred codes only).
func NewEstimator(dist store.Distance, q, c []float32) *Estimator {
	d := len(q)
	e := &Estimator{dist: dist, words: codeWords(d), cos: cosBound(d)}
	for i := range e.q {
		cc := c
		if i == 0 {
			cc = nil
		}
		qc := &e.q[i]
		qc.bits = make([]uint64, e.words)
		r, ww, vc := signBits(qc.bits, q, cc)
		qc.nw = float32(math.Sqrt(ww))
		qc.rot = r
		for _, x := range r {
			qc.rotSum += float64(x)
		}
		var c2 float64
		for _, x := range cc {
			c2 += float64(x) * float64(x)
		}
		qc.off = float32(vc - c2)
	}
	var qq float64
	for _, x := range q {
		qq += float64(x) * float64(x)
	}
	e.nq = float32(math.Sqrt(qq))
	return e
}

// estimate bounds the score of a code (its words and metadata) from
// above, with high probability, on the scale of proxy.
func (e *Estimator) estimate(w []uint64, m *codeMeta) float32 {
	qc := &e.q[0]
	if m.centred {
		qc = &e.q[1]
	}
	// Four sums, and the query's words cut to w's length (no bounds
	// checks): the loop runs for every item of every search.
	qb := qc.bits[:len(w)]
	var h0, h1, h2, h3 int
	i := 0
	for ; i+4 <= len(w); i += 4 {
		h0 += bits.OnesCount64(w[i] ^ qb[i])
		h1 += bits.OnesCount64(w[i+1] ^ qb[i+1])
		h2 += bits.OnesCount64(w[i+2] ^ qb[i+2])
		h3 += bits.OnesCount64(w[i+3] ^ qb[i+3])
	}
	for ; i < len(w); i++ {
		h0 += bits.OnesCount64(w[i] ^ qb[i])
	}
	h := h0 + h1 + h2 + h3
	// In float64: a code's norms may be any finite float32 (a hostile or
	// damaged file), whose squares and products overflow float32 into
	// Inf - Inf = NaN; in float64 they stay finite, and the result is at
	// worst ±Inf, which only decides whether the item is rescored.
	return e.scale(float64(m.nu)*float64(qc.nw)*float64(e.cos[h])+float64(m.vc)+float64(qc.off), m)
}

// scale maps dot, a bound of v·q for the vector of metadata m, to the
// scale of proxy for the estimator's distance.
func (e *Estimator) scale(dot float64, m *codeMeta) float32 {
	switch e.dist {
	case store.InnerProduct:
		return float32(dot)
	case store.L2:
		nv := float64(m.nv)
		return float32(2*dot - nv*nv)
	default:
		if m.nv == 0 || e.nq == 0 {
			return 0
		}
		return float32(dot / (float64(m.nv) * float64(e.nq)))
	}
}
