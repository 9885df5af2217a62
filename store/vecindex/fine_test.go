package vecindex

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/memvault/memvault/store"
)

// denseTopics returns n vectors of d dimensions in two dense topics, as
// one user's memories are (a shared direction plus a topic centroid plus
// noise, normalised: items of a topic have cosines near 0.8), and
// queries, each a stored item with noise added.
func denseTopics(r *rand.Rand, n, d, queries int) (items, qs [][]float32) {
	mix := func(base []float32, noise float32) []float32 {
		v := unitGauss(r, d)
		var s float64
		for i := range v {
			v[i] = base[i] + noise*v[i]
			s += float64(v[i]) * float64(v[i])
		}
		for i := range v {
			v[i] /= float32(math.Sqrt(s))
		}
		return v
	}
	common := unitGauss(r, d)
	topics := [][]float32{unitGauss(r, d), unitGauss(r, d)}
	for range n {
		c := topics[r.IntN(len(topics))]
		b := make([]float32, d)
		for j := range b {
			b[j] = 0.6*common[j] + 0.6*c[j]
		}
		items = append(items, mix(b, 0.45))
	}
	for range queries {
		qs = append(qs, mix(items[r.IntN(n)], 0.35))
	}
	return items, qs
}

// TestFineBoundsOnDenseTopics checks the fine parts' bounds (fine.go) on
// vectors in two dense topics, under every distance: every bound is at
// least the vector's exact score (the search prunes by them), and they
// leave few items above the tenth best score where the sign bits leave
// most of a topic (which every search then read and scored exactly: 131–152
// ms at 100 000 × 1 536 in 80 topics, issue 32). Making the bound unsound
// (its error term subtracted instead of added) fails the first check;
// taking the sign bits' bound for it fails the second.
func TestFineBoundsOnDenseTopics(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	const n, d, k = 2000, 384, 10
	items, qs := denseTopics(r, n, d, 8)
	centre := make([]float32, d)
	for _, v := range items {
		for j, x := range v {
			centre[j] += x / n
		}
	}
	codes := make([][]byte, n)
	for i, v := range items {
		codes[i] = EncodeCode(v, centre)
	}
	for _, dist := range []store.Distance{store.Cosine, store.L2, store.InnerProduct} {
		for qi, q := range qs {
			e := NewEstimator(dist, q, centre)
			exact := make([]float64, n)
			fineAbove, signAbove := 0, 0
			fineB, signB := make([]float32, n), make([]float32, n)
			for i, v := range items {
				var dot, vv, qq float64
				for j := range v {
					dot += float64(v[j]) * float64(q[j])
					vv += float64(v[j]) * float64(v[j])
					qq += float64(q[j]) * float64(q[j])
				}
				switch dist {
				case store.InnerProduct:
					exact[i] = dot
				case store.L2:
					exact[i] = 2*dot - vv // the proxy's scale: ranks as -|v - q|²
				default:
					exact[i] = dot / math.Sqrt(vv*qq)
				}
				f, m, ok := decodeFine(codes[i], d)
				if !ok {
					t.Fatal("EncodeCode's code has no fine part")
				}
				fineB[i] = e.estimateFine(&f, &m)
				w, m2, _ := decodeCode(nil, codes[i], d)
				signB[i] = e.estimate(w, &m2)
				if float64(fineB[i]) < exact[i] {
					t.Fatalf("%s query %d: item %d's fine bound %v is below its score %v", dist, qi, i, fineB[i], exact[i])
				}
			}
			s := slices.Clone(exact)
			slices.Sort(s)
			th := s[n-k]
			for i := range exact {
				if float64(fineB[i]) >= th {
					fineAbove++
				}
				if float64(signB[i]) >= th {
					signAbove++
				}
			}
			if fineAbove > n/20 || signAbove < n/4 {
				t.Fatalf("%s query %d: %d fine bounds and %d sign bits' bounds at or above the %dth score, want at most %d and at least %d",
					dist, qi, fineAbove, signAbove, k, n/20, n/4)
			}
		}
	}
}

// FuzzDecodeFine feeds arbitrary code columns and dimension counts to the
// fine part's decoder: it rejects or decodes, never panics, what it
// decodes is a code decodeCode accepts, and it estimates to a score that
// is not NaN.
func FuzzDecodeFine(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 3))
	f.Add(EncodeCode(unitGauss(r, 64), nil), 64)
	f.Add(EncodeCode(unitGauss(r, 65), unitGauss(r, 65)), 65)
	f.Add(EncodeCode(make([]float32, 8), nil), 8)
	f.Add([]byte{3, 0}, 1)
	f.Fuzz(func(t *testing.T, b []byte, d int) {
		if d > 1<<16 {
			d = 1 << 16
		}
		fn, m, ok := decodeFine(b, d)
		if !ok {
			return
		}
		if _, _, ok := decodeCode(nil, b, d); !ok || len(fn.levels) != d {
			t.Fatalf("a fine part of %d levels for %d dimensions, in a code decodeCode rejects (%v)", len(fn.levels), d, !ok)
		}
		q := make([]float32, d)
		q[0] = 1
		for _, dist := range []store.Distance{store.Cosine, store.L2, store.InnerProduct} {
			e := NewEstimator(dist, q, nil)
			if est := e.estimateFine(&fn, &m); math.IsNaN(float64(est)) {
				t.Fatalf("%s estimate is NaN", dist)
			}
		}
	})
}

// FuzzSplitJoinCode feeds arbitrary blobs to SplitCode and arbitrary
// halves to JoinCode (the rows of a storage that keeps the fine parts
// apart, which a damaged or hostile file may hold): neither panics, a
// split blob joins back to itself, the sign half of a split is a format-2
// code of the same dimensions, and a join of halves that do not fit
// returns the code half unchanged.
func FuzzSplitJoinCode(f *testing.F) {
	r := rand.New(rand.NewPCG(4, 4))
	for _, d := range []int{1, 63, 64, 65, 1536} {
		b := EncodeCode(unitGauss(r, d), unitGauss(r, d))
		code, fine := SplitCode(b)
		f.Add(b, code, fine)
	}
	f.Add([]byte{3, 0}, []byte{2, 0}, []byte{})
	f.Fuzz(func(t *testing.T, b, code, fine []byte) {
		c, fn := SplitCode(b)
		if fn == nil {
			if !bytes.Equal(c, b) {
				t.Fatal("a blob without fine part split into something else")
			}
		} else {
			if j := JoinCode(nil, c, fn); !bytes.Equal(j, b) {
				t.Fatalf("split and joined: %x, want %x", j, b)
			}
			if c[0] != codeFormat || b[0] != codeFormatFine {
				t.Fatalf("split a format %d blob into a format %d code", b[0], c[0])
			}
			d := len(fn) - fineHeader
			if _, _, ok := decodeCode(nil, b, d); ok {
				if _, _, ok := decodeCode(nil, c, d); !ok {
					t.Fatal("the sign half of a valid code does not decode")
				}
			}
		}
		j := JoinCode([]byte{9}, code, fine)
		if j[0] != 9 {
			t.Fatal("JoinCode overwrote dst")
		}
		if !bytes.Equal(j[1:], code) {
			w, d := (len(code)-codeHeader)/8, len(fine)-fineHeader
			if len(j) != 1+len(code)+len(fine) || j[1] != codeFormatFine || code[0] != codeFormat || codeWords(d) != w {
				t.Fatalf("joined %d and %d bytes into %d", len(code), len(fine), len(j)-1)
			}
		}
		if fn, m, ok := decodeFine(j[1:], len(fine)-fineHeader); ok {
			e := NewEstimator(store.Cosine, append(make([]float32, len(fn.levels)-1), 1), nil)
			if est := e.estimateFine(&fn, &m); math.IsNaN(float64(est)) {
				t.Fatal("estimate is NaN")
			}
		}
	})
}

// FuzzDecodeFinePart feeds arbitrary fine parts and dimension counts to
// the decoder of a fine part read alone (FineReader): it rejects or
// decodes, never panics, what it decodes has d levels and is what the
// joined code's decoder reads, and it estimates to a score that is not
// NaN.
func FuzzDecodeFinePart(f *testing.F) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, d := range []int{1, 64, 65} {
		_, fine := SplitCode(EncodeCode(unitGauss(r, d), unitGauss(r, d)))
		f.Add(fine, d)
	}
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0xc0, 0x7f, 1}, 1)
	f.Fuzz(func(t *testing.T, b []byte, d int) {
		if d > 1<<16 {
			d = 1 << 16
		}
		fn, ok := decodeFinePart(b, d)
		if !ok {
			return
		}
		if len(fn.levels) != d {
			t.Fatalf("%d levels for %d dimensions", len(fn.levels), d)
		}
		// A format-2 code of d dimensions, all zero (no rotation made:
		// the fuzzer tries many dimension counts).
		signs := make([]byte, codeHeader+8*codeWords(d))
		signs[0] = codeFormat
		whole, m, ok := decodeFine(JoinCode(nil, signs, b), d)
		if !ok || whole.delta != fn.delta || whole.enorm != fn.enorm || !bytes.Equal(whole.levels, fn.levels) {
			t.Fatalf("the joined code decodes to %+v (%v), the part alone to %+v", whole, ok, fn)
		}
		q := make([]float32, d)
		q[0] = 1
		for _, dist := range []store.Distance{store.Cosine, store.L2, store.InnerProduct} {
			if est := NewEstimator(dist, q, nil).estimateFine(&fn, &m); math.IsNaN(float64(est)) {
				t.Fatalf("%s estimate is NaN", dist)
			}
		}
	})
}
