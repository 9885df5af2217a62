package vecindex

import (
	"encoding/binary"
	"math"
)

// The fine part of a code (format 3) quantizes the rotated, centred
// vector r = R(v - c) the sign bits are taken of to 8 bits a dimension:
//
//	r_i ≈ (n_i - 127.5)·Δ,  n_i = floor(r_i/Δ) + 128 ∈ 0..255,  Δ = max|r_i| / 127.99
//
// with the norm |e| of the whole rounding error e = r - r̂ stored beside
// it (rounded up). Then u·w = r̂·R(w) + e·R(w), and
//
//	v·q ≤ r̂·R(w) + z·|e||w|/√d + v·c + q·c - |c|²
//
// bounds the score as the sign bits do, but some hundred times tighter
// at 1 536 dimensions: what lets a search tell apart the items of one
// dense topic, which share most of their sign bits (one user's memories;
// issue 32), and read the vectors of only those that can still rank.
// The fine part is not held in memory (d bytes a vector, 8 times the
// sign bits): a search reads it from the storage (Source.Codes) for the
// candidates the sign bits leave, about the items of the query's topic
// (1 450 a search at 20 000 × 1 536 in 16 topics), in its read.
// Four bits a dimension bounded about 200 items of a 1 250-item topic
// above the tenth score (each then read and scored exactly); eight bound
// a few.
//
// Like the sign bits' bound (boundSigmas), the term z·|e||w|/√d is a
// bound with high probability, not a proof: e·R(w) is the sum of d
// rounding errors, each within ±Δ/2 and without a sign of its own (no
// coordinate is clipped: Δ covers the largest), against the coordinates
// of an unrelated query, whose spread over the fixed rotation is
// |e||w|/√d; it exceeds z = fineSigmas times that with probability about
// 1e-9 (a sub-gaussian tail). Cauchy–Schwarz, |e·R(w)| ≤ |e||w|, would
// prove it, but is √d ≈ 39 times looser: as loose as the sign bits.
//
// Fine part layout, after the sign bits, little-endian:
//
//	bytes 0-7  float32 Δ, |e|
//	then       d bytes n_i
const (
	fineHeader = 8
	fineSigmas = 6
)

// fineBytes is the bytes of the levels of a d-dimension fine part.
func fineBytes(d int) int { return d }

// appendFine appends the fine part of r = R(v - c) to b.
func appendFine(b []byte, r []float32) []byte {
	var top float64
	for _, x := range r {
		top = max(top, math.Abs(float64(x)))
	}
	delta := float32(top / 127.99)
	lv := make([]byte, fineBytes(len(r)))
	var ee float64
	for i, x := range r {
		n := 128
		if delta > 0 {
			n = int(math.Floor(float64(x)/float64(delta))) + 128
			n = min(max(n, 0), 255)
		}
		d := float64(x) - (float64(n)-127.5)*float64(delta)
		ee += d * d
		lv[i] = byte(n)
	}
	// Rounded up: the bound must not shrink by float32 rounding.
	en := float32(math.Sqrt(ee))
	if en < math.MaxFloat32 {
		en = math.Nextafter32(en, math.MaxFloat32)
	}
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(delta))
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(en))
	return append(b, lv...)
}

// fine is a decoded fine part.
type fine struct {
	delta, enorm float32
	levels       []byte
}

// decodeFine returns the fine part of a code blob of d dimensions, and
// the blob's metadata; ok is false for a blob that has none (format 2) or
// is not a code (see decodeCode), or whose fine part is not one (Δ or
// |e| negative or not finite). levels aliases b.
func decodeFine(b []byte, d int) (f fine, m codeMeta, ok bool) {
	if _, m, ok = decodeCode(nil, b, d); !ok || b[0] != codeFormatFine {
		return f, m, false
	}
	p := b[codeHeader+8*codeWords(d):]
	f.delta = math.Float32frombits(binary.LittleEndian.Uint32(p))
	f.enorm = math.Float32frombits(binary.LittleEndian.Uint32(p[4:]))
	for _, x := range []float32{f.delta, f.enorm} {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) || x < 0 {
			return f, m, false
		}
	}
	f.levels = p[fineHeader:]
	return f, m, true
}

// estimateFine bounds the score of a vector from its fine part and
// metadata (see decodeFine), with high probability, on the scale of
// proxy: tighter than estimate.
func (e *Estimator) estimateFine(f *fine, m *codeMeta) float32 {
	qc := &e.q[0]
	if m.centred {
		qc = &e.q[1]
	}
	w := qc.rot
	lv := f.levels[:len(w)]
	var acc float32
	for i, x := range w {
		acc += float32(lv[i]) * x
	}
	d := float64(len(w))
	dot := float64(f.delta)*(float64(acc)-127.5*qc.rotSum) +
		fineSigmas*float64(f.enorm)*float64(qc.nw)/math.Sqrt(d) +
		float64(m.vc) + float64(qc.off)
	return e.scale(dot, m)
}

// A storage that keeps the sign bits of its codes apart from their fine
// parts (store/sqlitestore: a code row of format 2 that fits SQLite's
// page, the fine part in a table of its own, read only for the
// candidates a search bounds finely) splits what EncodeCode made with
// SplitCode and joins the two halves back with JoinCode before handing
// them to the index (Source.Codes, CodeReader).

// SplitCode splits a code blob of format 3 into the format-2 code of its
// sign bits (a new slice) and its fine part (aliasing b); any other blob
// (format 2, or not a code of consistent length) comes back whole, with
// fine nil. JoinCode(nil, code, fine) is b again.
func SplitCode(b []byte) (code, fine []byte) {
	w, d, ok := fineSplit(len(b))
	if !ok || b[0] != codeFormatFine {
		return b, nil
	}
	n := codeHeader + 8*w
	code = append([]byte(nil), b[:n]...)
	code[0] = codeFormat
	return code, b[n : n+fineHeader+fineBytes(d)]
}

// JoinCode appends to dst the format-3 blob of a format-2 code and the
// fine part SplitCode cut from it; when fine is empty, or the two do not
// fit together (another format, or lengths of different dimension
// counts), it appends code alone, which then bounds its vector by its
// sign bits (a format-3 code stored whole, as a build before the split
// wrote it, comes back as it is).
func JoinCode(dst, code, fine []byte) []byte {
	if len(fine) == 0 || len(code) < codeHeader || code[0] != codeFormat || (len(code)-codeHeader)%8 != 0 {
		return append(dst, code...)
	}
	w, d := (len(code)-codeHeader)/8, len(fine)-fineHeader
	if d < 1 || codeWords(d) != w {
		return append(dst, code...)
	}
	at := len(dst)
	dst = append(append(dst, code...), fine...)
	dst[at] = codeFormatFine
	return dst
}

// fineSplit returns the words of sign bits and the dimensions of a
// format-3 blob of n bytes: n = codeHeader + 8·w + fineHeader + d with
// w = ⌈d/64⌉, that is n - codeHeader - fineHeader = 72·w - r for the
// padding r < 64 of the last word, so that w is that over 72 rounded up.
func fineSplit(n int) (w, d int, ok bool) {
	m := n - codeHeader - fineHeader
	if m < 9 {
		return 0, 0, false
	}
	w = (m + 71) / 72
	d = m - 8*w
	return w, d, d >= 1 && codeWords(d) == w
}

// decodeFinePart decodes a fine part as SplitCode cut it from a code of d
// dimensions (Δ, |e| and d levels; levels aliases b); ok is false for
// anything else (another length, Δ or |e| negative or not finite).
func decodeFinePart(b []byte, d int) (f fine, ok bool) {
	if d <= 0 || len(b) != fineHeader+fineBytes(d) {
		return f, false
	}
	f.delta = math.Float32frombits(binary.LittleEndian.Uint32(b))
	f.enorm = math.Float32frombits(binary.LittleEndian.Uint32(b[4:]))
	for _, x := range []float32{f.delta, f.enorm} {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) || x < 0 {
			return f, false
		}
	}
	f.levels = b[fineHeader:]
	return f, true
}
