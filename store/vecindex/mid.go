package vecindex

import (
	"math"
	"math/bits"
)

// The middle part of a code is its fine part (fine.go) cut to 5 bits a
// dimension, held in memory beside the sign bits: 5d/8 bytes a vector
// (960 at 1 536 dimensions, 96 MB at 100 000 vectors, where the fine
// parts would take 154 MB), outside the Go heap (arena.go). Inside a dense topic (issue 32: one user's
// memories) the sign bits bound every item of the query's topic above the
// tenth score, and each of them had its fine part read from the storage
// (about 2 000 rows a search at 100 000 × 1 536 in 80 topics, three
// quarters of a search's CPU). The middle part bounds them in memory
// first: about one in twenty of a topic's items stays above the tenth
// score (measured, of 1 250 at 20 000 × 1 536 in 16 topics: 68, against
// 1 450 by sign bits, 280 with 4 bits, 26 with 6 and 12 with the 8 of the
// fine part; at 100 000 in 80 topics 4 bits left 347 a search to read),
// and only those have their fine parts read.
//
// It is derived from the fine part, not stored in a form of its own: the
// level of dimension i is m_i = n_i >> 3 of the fine level n_i, which
// reconstructs r_i as (m_i - 15.5)·8Δ, and its rounding error is
// e' = e + (r̂ - r̂'), the fine part's plus the difference of the two
// reconstructions, each a rounding error of r that does not follow the
// sign of r_i (no coordinate clipped), so that the bound of fine.go holds
// with |e'| ≤ |e| + |r̂ - r̂'| (rounded up) in place of |e|. The five bits
// are kept as a nibble m_i >> 1 (two dimensions a byte) and a bit plane
// of m_i & 1 (eight a byte): Σ m_i·w_i = 2·Σ (m_i >> 1)·w_i + Σ over the
// set bits of w_i, the last summed a byte at a time from a table of the
// query's (queryCode.plane). A code
// without fine part (format 2) has no middle part: its item goes from
// its sign bits' bound to the storage's fine part as before.
//
// The index gets middle parts wherever it reads whole codes (Committed,
// Source.Codes, Source.AllCodes when the storage hands format-3 codes)
// and keeps them in its snapshot (parts of their own after the sign
// bits'; see snapshot.go). When the index with them would exceed the
// cache's budget it drops them and keeps the sign bits alone.

// midBytes is the bytes of a d-dimension middle part: d/2 of nibbles,
// then d/8 of bit plane (each rounded up).
func midBytes(d int) int { return nibBytes(d) + (d+7)/8 }

// nibBytes is the bytes of the nibbles of a d-dimension middle part.
func nibBytes(d int) int { return (d + 1) / 2 }

// midMeta is a code's middle part's scale: Δ' = 8Δ and |e'|; enorm < 0
// marks a code without middle part.
type midMeta struct {
	delta, enorm float32
}

// noMid is the midMeta of a code without middle part.
var noMid = midMeta{0, -1}

// fineTail returns the fine part of b, a blob decodeCode accepted as a
// code of d dimensions; ok is false when it has none (format 2) or it is
// not one (see decodeFine).
func fineTail(b []byte, d int) (f fine, ok bool) {
	if len(b) == 0 || b[0] != codeFormatFine {
		return f, false
	}
	p := b[codeHeader+8*codeWords(d):]
	f.delta = math.Float32frombits(leUint32(p))
	f.enorm = math.Float32frombits(leUint32(p[4:]))
	for _, x := range []float32{f.delta, f.enorm} {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) || x < 0 {
			return f, false
		}
	}
	f.levels = p[fineHeader : fineHeader+fineBytes(d)]
	return f, true
}

func leUint32(b []byte) uint32 {
	_ = b[3]
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// appendMid appends the middle part of fine part f to dst (midBytes of its
// dimensions: dimension 2j's nibble in the low half of byte j, 2j+1's in
// the high; then dimension i's plane bit in bit i%8 of byte i/8) and
// returns its scale.
func appendMid(dst []byte, f *fine) ([]byte, midMeta) {
	var ss float64 // Σ (n_i mod 8 - 3.5)²: |r̂ - r̂'|² / Δ²
	lv := f.levels
	for j := 0; j < len(lv); j += 2 {
		a := lv[j]
		x := float64(a&7) - 3.5
		ss += x * x
		b := a >> 4
		if j+1 < len(lv) {
			h := lv[j+1]
			y := float64(h&7) - 3.5
			ss += y * y
			b |= h &^ 15
		}
		dst = append(dst, b)
	}
	for j := 0; j < len(lv); j += 8 {
		var p byte
		for k, x := range lv[j:min(j+8, len(lv))] {
			p |= (x >> 3 & 1) << k
		}
		dst = append(dst, p)
	}
	en := float32(float64(f.enorm) + float64(f.delta)*math.Sqrt(ss))
	if en < math.MaxFloat32 {
		// Rounded up: the bound must not shrink by float32 rounding.
		en = math.Nextafter32(en, math.MaxFloat32)
	}
	return dst, midMeta{delta: 8 * f.delta, enorm: en}
}

// planeSums returns qc's table of bit-plane sums: entry 256·k + b is the
// sum of rot[8k+i] over the bits i set in b.
func (qc *queryCode) planeSums() []float32 {
	qc.planeOnce.Do(func() {
		w := qc.rot
		nb := (len(w) + 7) / 8
		t := make([]float32, 256*nb)
		for k := range nb {
			row := t[256*k : 256*(k+1)]
			for b := 1; b < 256; b++ {
				i := 8*k + bits.TrailingZeros8(uint8(b))
				x := float32(0)
				if i < len(w) {
					x = w[i]
				}
				row[b] = row[b&(b-1)] + x
			}
		}
		qc.plane = t
	})
	return qc.plane
}

// estimateMid bounds the score of a vector from its middle part (levels,
// scale mm) and metadata, with high probability, on the scale of proxy:
// between estimate and estimateFine.
func (e *Estimator) estimateMid(levels []byte, mm *midMeta, m *codeMeta) float32 {
	qc := &e.q[0]
	if m.centred {
		qc = &e.q[1]
	}
	w := qc.rot
	n := len(w) / 2
	nb := nibBytes(len(w))
	lv := levels[:midBytes(len(w))]
	var a0, a1 float32
	for j, b := range lv[:n] {
		a0 += float32(b&15) * w[2*j]
		a1 += float32(b>>4) * w[2*j+1]
	}
	if len(w)&1 == 1 {
		a0 += float32(lv[n]&15) * w[2*n]
	}
	plane := qc.planeSums()
	var p float32
	for k, b := range lv[nb:] {
		p += plane[256*k+int(b)]
	}
	d := float64(len(w))
	dot := float64(mm.delta)*(2*float64(a0+a1)+float64(p)-15.5*qc.rotSum) +
		fineSigmas*float64(mm.enorm)*float64(qc.nw)/math.Sqrt(d) +
		float64(m.vc) + float64(qc.off)
	return e.scale(dot, m)
}
