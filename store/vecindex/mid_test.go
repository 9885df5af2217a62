package vecindex

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/memvault/memvault/store"
)

// TestMidBoundsOnDenseTopics checks the middle parts' bounds (mid.go) on
// vectors in two dense topics, under every distance and at dimension
// counts with and without a partial nibble or plane byte: every bound is
// at least the vector's exact score (a search prunes by them), and they
// leave at most a tenth as many items above the tenth best score as the
// sign bits do (what spares a search the fine parts of most of a topic).
// Leaving the bit plane out of the sum, or the fine part's rounding from
// the middle part's error norm, fails the first check.
func TestMidBoundsOnDenseTopics(t *testing.T) {
	for _, d := range []int{384, 77} {
		t.Run(fmt.Sprint(d), func(t *testing.T) {
			r := rand.New(rand.NewPCG(8, uint64(d)))
			const n, k = 2000, 10
			items, qs := denseTopics(r, n, d, 6)
			centre := make([]float32, d)
			for _, v := range items {
				for j, x := range v {
					centre[j] += x / n
				}
			}
			codes := make([]code, n)
			for i, v := range items {
				c, ok := decodeFull(EncodeCode(v, centre), d)
				if !ok || len(c.mid) != midBytes(d) || c.mm.enorm < 0 {
					t.Fatal("EncodeCode's code has no middle part")
				}
				codes[i] = c
			}
			for _, dist := range []store.Distance{store.Cosine, store.L2, store.InnerProduct} {
				for qi, q := range qs {
					e := NewEstimator(dist, q, centre)
					exact := make([]float64, n)
					midB, signB := make([]float32, n), make([]float32, n)
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
							exact[i] = 2*dot - vv
						default:
							exact[i] = dot / math.Sqrt(vv*qq)
						}
						c := &codes[i]
						midB[i] = e.estimateMid(c.mid, &c.mm, &c.meta)
						signB[i] = e.estimate(c.bits, &c.meta)
						if float64(midB[i]) < exact[i] {
							t.Fatalf("%s query %d: item %d's middle bound %v is below its score %v", dist, qi, i, midB[i], exact[i])
						}
					}
					s := slices.Clone(exact)
					slices.Sort(s)
					th := s[n-k]
					midAbove, signAbove := 0, 0
					for i := range exact {
						if float64(midB[i]) >= th {
							midAbove++
						}
						if float64(signB[i]) >= th {
							signAbove++
						}
					}
					if d >= 384 && 10*midAbove > signAbove {
						t.Fatalf("%s query %d: %d middle bounds and %d sign bits' bounds at or above the %dth score, want at most a tenth",
							dist, qi, midAbove, signAbove, k)
					}
				}
			}
		})
	}
}

// TestSnapshotKeepsMiddleParts: the middle parts round-trip through the
// snapshot, across parts, beside codes without any (format 2); parts of
// middle parts out of place, or too few, make a malformed snapshot; and
// an index over its budget with them drops them and keeps the sign bits.
func TestSnapshotKeepsMiddleParts(t *testing.T) {
	const dims = 1536
	r := rand.New(rand.NewPCG(9, 9))
	ix := newCodeIndex(dims, nil)
	for i := range 3000 {
		b := EncodeCode(unitGauss(r, dims), nil)
		if i%7 == 3 {
			b, _ = SplitCode(b) // format 2: no middle part
		}
		c, ok := decodeFull(b, dims)
		if !ok {
			t.Fatal("code does not decode")
		}
		ix.add("ns", fmt.Sprintf("%05d", i), 1, []code{c})
	}
	parts := ix.serialize(4)
	var mids int
	for _, p := range parts {
		if string(p[:len(midMagic)]) == midMagic {
			mids++
		}
	}
	if mids < 2 {
		t.Fatalf("%d parts of middle parts: the test needs a boundary between them", mids)
	}
	load := func(parts [][]byte) (*codeIndex, error) {
		again := newCodeIndex(dims, nil)
		for _, p := range parts {
			if err := again.deserialize(p, 4); err != nil {
				return again, err
			}
		}
		if !again.midComplete() {
			return again, ErrSnapshot
		}
		return again, nil
	}
	again, err := load(parts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(again.mid, ix.mid) || !slices.Equal(again.mids, ix.mids) || !slices.Equal(again.bits, ix.bits) {
		t.Fatal("the middle parts changed in a round trip")
	}
	n := len(parts)
	for name, bad := range map[string][][]byte{
		"a part of middle parts missing": append(slices.Clone(parts[:n-2]), parts[n-1]),
		"the last part missing":          parts[:n-1],
		"middle parts before sign bits":  append([][]byte{parts[n-mids]}, parts...),
	} {
		if _, err := load(bad); !errors.Is(err, ErrSnapshot) {
			t.Errorf("%s: %v, want ErrSnapshot", name, err)
		}
	}

	// Over budget with middle parts, within it without: they go.
	small, fit := newCodeIndex(dims, nil), ix.bytes()-int64(len(ix.mid))
	for _, p := range parts {
		if err := small.deserialize(p, 4); err != nil {
			t.Fatal(err)
		}
		if !small.fits(fit) {
			t.Fatal("the sign bits alone do not fit")
		}
	}
	if small.mid != nil || !small.midOff || len(small.meta) != len(ix.meta) {
		t.Fatalf("over budget: %d bytes of middle parts kept, %d codes", len(small.mid), len(small.meta))
	}
}

// TestSnapshotLoadLeavesRoom: an index loaded from a snapshot with middle
// parts takes the codes the log adds next without moving its middle
// parts. Sized for the snapshot's codes alone, the first code added
// copied every middle part to an arena twice as large (80 ms of the first
// search after opening a store at 100 000 × 1 536 whose log held one
// change since its snapshot).
func TestSnapshotLoadLeavesRoom(t *testing.T) {
	const dims = 256
	r := rand.New(rand.NewPCG(10, 10))
	ix := newCodeIndex(dims, nil)
	codeOf := func() code {
		c, ok := decodeFull(EncodeCode(unitGauss(r, dims), nil), dims)
		if !ok {
			t.Fatal("code does not decode")
		}
		return c
	}
	for i := range 2000 {
		ix.add("ns", fmt.Sprintf("%05d", i), 1, []code{codeOf()})
	}
	again := newCodeIndex(dims, nil)
	for _, p := range ix.serialize(4) {
		if err := again.deserialize(p, 4); err != nil {
			t.Fatal(err)
		}
	}
	mem := again.midMem
	for i := range 100 {
		again.add("ns", fmt.Sprintf("new%03d", i), 2, []code{codeOf()})
	}
	if again.midMem != mem {
		t.Fatal("adding codes after a snapshot load moved every middle part to a new arena")
	}
	if _, _, ok := again.midOf(len(again.meta) - 1); !ok {
		t.Fatal("the added code has no middle part")
	}
}

// FuzzMidPart feeds arbitrary parts of middle parts to the decoder a fill
// uses (fill.go: into an index that holds middle parts alone, for codes
// codes): it loads or refuses them, never panics, never holds more middle
// parts than codes, and what it loads has a finite, non-negative scale.
func FuzzMidPart(f *testing.F) {
	const dims = 70
	r := rand.New(rand.NewPCG(6, 6))
	t0 := newCodeIndex(dims, nil)
	for i := range 3 {
		b := EncodeCode(unitGauss(r, dims), nil)
		if i == 1 {
			b, _ = SplitCode(b) // no middle part
		}
		c, ok := decodeFull(b, dims)
		if !ok {
			f.Fatal("code does not decode")
		}
		t0.add("ns", fmt.Sprint(i), int64(i), []code{c})
	}
	for _, p := range t0.serialize(1) {
		if string(p[:len(midMagic)]) == midMagic {
			f.Add(p[:len(p)-4], uint8(3)) // the checksum is added below
			f.Add(p[:len(p)-4], uint8(2))
		}
	}
	f.Add([]byte(midMagic), uint8(1))
	f.Add(append([]byte(midMagic), dims, 1, 0, 0), uint8(1))
	f.Fuzz(func(t *testing.T, p []byte, codes uint8) {
		ix := newCodeIndex(dims, nil)
		// With a good checksum, so that the decoder behind it is fuzzed.
		if err := ix.deserializeMid(sealPart(p), 1, int(codes)); err != nil {
			return
		}
		mb := midBytes(dims)
		if len(ix.mids) > int(codes) || len(ix.mid) != len(ix.mids)*mb {
			t.Fatalf("%d middle parts (%d bytes) for %d codes", len(ix.mids), len(ix.mid), codes)
		}
		for _, mm := range ix.mids {
			if mm == noMid {
				continue
			}
			for _, x := range []float32{mm.delta, mm.enorm} {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) || x < 0 {
					t.Fatalf("a middle part's scale %v was loaded", mm)
				}
			}
		}
	})
}

// TestSnapshotBitFlipRefused: a bit flipped anywhere in a part of the
// snapshot — sign bits, a code's scales, a middle part — makes the part
// malformed (its checksum), so that the load reads every code row instead
// of ranking with a damaged code. Before the checksum (format 4), a part
// whose code bytes were flipped loaded, and a search with the item's own
// vector missed it (session 21 review).
func TestSnapshotBitFlipRefused(t *testing.T) {
	const dims = 64
	r := rand.New(rand.NewPCG(5, 5))
	ix := newCodeIndex(dims, nil)
	for i := range 40 {
		c, ok := decodeFull(EncodeCode(unitGauss(r, dims), nil), dims)
		if !ok {
			t.Fatal("code does not decode")
		}
		ix.add("ns", fmt.Sprintf("%03d", i), 1, []code{c})
	}
	parts := ix.serialize(7)
	load := func(parts [][]byte) error {
		again := newCodeIndex(dims, nil)
		for _, p := range parts {
			if err := again.deserialize(p, 7); err != nil {
				return err
			}
		}
		return nil
	}
	if err := load(parts); err != nil {
		t.Fatalf("the snapshot as written: %v", err)
	}
	for pi, p := range parts {
		for _, at := range []int{len(p) / 3, len(p) / 2, len(p) - 5} {
			flipped := slices.Clone(parts)
			flipped[pi] = slices.Clone(p)
			flipped[pi][at] ^= 0x10
			if err := load(flipped); !errors.Is(err, ErrSnapshot) {
				t.Errorf("part %d with byte %d flipped: %v, want ErrSnapshot", pi, at, err)
			}
		}
	}
}
