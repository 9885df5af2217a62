package vecindex

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/memvault/memvault/store"
)

// unitGauss is a random unit vector of d dimensions.
func unitGauss(r *rand.Rand, d int) []float32 {
	v := make([]float32, d)
	var n float64
	for i := range v {
		x := r.NormFloat64()
		v[i] = float32(x)
		n += x * x
	}
	n = math.Sqrt(n)
	for i := range v {
		v[i] /= float32(n)
	}
	return v
}

func TestCodeIndexCompact(t *testing.T) {
	tb := newCodeIndex(2, nil)
	cd := func(v []float32) code {
		bits, m, ok := decodeCode(nil, EncodeCode(v, nil), 2)
		if !ok {
			t.Fatal("code does not decode")
		}
		return code{bits: bits, meta: m}
	}
	for i := range 10 {
		tb.add("n", fmt.Sprint(i), int64(i), []code{cd([]float32{float32(i), 1}), cd([]float32{1, float32(i)})})
	}
	for i := range 6 {
		tb.remove(Key{NS: "n", Key: fmt.Sprint(i)})
	}
	tb.compact()
	if tb.dead != 0 || len(tb.slots) != 4 || len(tb.meta) != 8 || len(tb.bits) != 8 {
		t.Fatalf("after compaction: dead %d, %d slots, %d metas, %d words", tb.dead, len(tb.slots), len(tb.meta), len(tb.bits))
	}
	e := NewEstimator(store.InnerProduct, []float32{1, 1}, nil)
	got := map[string]float32{}
	for _, a := range tb.estimateAll(everyNamespace(tb, e), nil) {
		got[string(tb.keyOf(&tb.slots[a.slot]))] = a.est
	}
	for i := 6; i < 10; i++ {
		// Both vectors lie in the query's quadrant: the estimate is |v||q|.
		if want := float32(math.Hypot(float64(i), 1) * math.Sqrt2); math.Abs(float64(got[fmt.Sprint(i)]-want)) > 1e-4 {
			t.Fatalf("item %d estimates %v after compaction, want %v", i, got[fmt.Sprint(i)], want)
		}
	}
	if len(got) != 4 {
		t.Fatalf("%d items estimated, want 4", len(got))
	}
}

// TestCodeIndexFindsItsItems runs random adds, removes, compactions and
// snapshot round trips against a map, from an index loaded in key order
// (the sorted part) through items added out of order (the tail): every
// key is found exactly when it is live, with its latest codes, and a
// search estimates each live item once.
func TestCodeIndexFindsItsItems(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	const dims = 8
	cd := func(tag int64) code {
		v := make([]float32, dims)
		v[tag%dims] = float32(tag + 1)
		bits, m, _ := decodeCode(nil, EncodeCode(v, nil), dims)
		return code{bits: bits, meta: m}
	}
	keyOf := func(i int) Key { return Key{NS: fmt.Sprint("ns.", i%3), Key: fmt.Sprintf("k%03d", i)} }
	model := map[Key]int64{}
	ix := newCodeIndex(dims, nil)
	// A load appends in key order: namespaces, then keys.
	for ns := range 3 {
		for i := ns; i < 300; i += 3 {
			if r.IntN(2) == 0 {
				k, upd := keyOf(i), int64(r.IntN(1000))
				ix.add(k.NS, k.Key, upd, []code{cd(upd)})
				model[k] = upd
			}
		}
	}
	if ix.sorted != len(ix.slots) || ix.tail != nil {
		t.Fatalf("an index loaded in key order has %d of %d slots sorted and a tail of %d", ix.sorted, len(ix.slots), len(ix.tail))
	}
	check := func(step int) {
		t.Helper()
		for i := range 300 {
			k := keyOf(i)
			want, live := model[k]
			s, found := ix.lookup(k)
			if found != live || (found && (ix.slots[s].updated != want || !ix.slots[s].live || string(ix.keyOf(&ix.slots[s])) != k.Key)) {
				t.Fatalf("step %d: %v found %v (slot %d), want live %v, updated %d", step, k, found, s, live, want)
			}
		}
		seen := map[Key]bool{}
		for _, a := range ix.estimateAll(everyNamespace(ix, NewEstimator(store.InnerProduct, make([]float32, dims), nil)), nil) {
			s := ix.slots[a.slot]
			k := ix.itemOf(&s)
			if seen[k] || model[k] != s.updated {
				t.Fatalf("step %d: search estimated %v twice or stale", step, k)
			}
			seen[k] = true
		}
		if len(seen) != len(model) || ix.live != len(model) {
			t.Fatalf("step %d: %d estimated, %d live, want %d", step, len(seen), ix.live, len(model))
		}
	}
	check(0)
	compactions := 0
	for step := 1; step <= 3000; step++ {
		k := keyOf(r.IntN(300))
		switch op := r.IntN(200); {
		case op < 100:
			upd := int64(r.IntN(1000))
			ix.add(k.NS, k.Key, upd, []code{cd(upd), cd(upd + 1)})
			model[k] = upd
		case op < 185:
			ix.remove(k)
			delete(model, k)
		case op < 199:
			due := ix.dead > 0 && 2*ix.dead >= len(ix.meta)
			if due {
				compactions++
			}
			ix.compact()
			if due && (ix.tail != nil || ix.sorted != len(ix.slots)) {
				t.Fatalf("step %d: compacted, %d of %d slots sorted and a tail of %d", step, ix.sorted, len(ix.slots), len(ix.tail))
			}
		default:
			again := newCodeIndex(dims, nil)
			for _, p := range ix.serialize(1) {
				if err := again.deserialize(p, 1); err != nil {
					t.Fatalf("step %d: the snapshot does not load: %v", step, err)
				}
			}
			if again.tail != nil || again.sorted != len(again.slots) {
				t.Fatalf("step %d: a loaded snapshot has a tail of %d", step, len(again.tail))
			}
			ix = again
		}
		check(step)
	}
	if compactions == 0 {
		t.Fatal("no compaction was due: the test checks none")
	}
}

// everyNamespace is the estimators of a search of every namespace of t in
// one space, with e.
func everyNamespace(t *codeIndex, e *Estimator) []*Estimator {
	ests := make([]*Estimator, len(t.names))
	for i := range ests {
		ests[i] = e
	}
	return ests
}

func TestCodeRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, d := range []int{1, 63, 64, 65, 1536} {
		v := unitGauss(r, d)
		c := unitGauss(r, d)
		for _, centre := range [][]float32{nil, c} {
			bits, m, ok := decodeCode(nil, EncodeCode(v, centre), d)
			if !ok || len(bits) != codeWords(d) || m.centred != (centre != nil) {
				t.Fatalf("d=%d: code does not decode (%v)", d, ok)
			}
			// The bits are the signs of the rotated centred vector.
			u := slices.Clone(v)
			for i := range u {
				if centre != nil {
					u[i] -= centre[i]
				}
			}
			ru, err := rotationFor(d).Apply(u)
			if err != nil {
				t.Fatal(err)
			}
			for i, x := range ru {
				if (bits[i/64]>>(i%64)&1 == 1) != (x > 0) {
					t.Fatalf("d=%d: bit %d wrong", d, i)
				}
			}
			if math.Abs(float64(m.nv)-1) > 1e-5 {
				t.Fatalf("d=%d: |v| = %v", d, m.nv)
			}
			if _, _, ok := decodeCode(nil, EncodeCode(v, centre), d+1); ok && codeWords(d+1) != codeWords(d) {
				t.Fatalf("d=%d: decodes as %d dimensions", d, d+1)
			}
		}
	}
}

// FuzzDecodeCode feeds arbitrary code columns and dimension counts to the
// decoder: it rejects or decodes, never panics, and what it decodes
// estimates to a finite score.
func FuzzDecodeCode(f *testing.F) {
	r := rand.New(rand.NewPCG(2, 2))
	f.Add(EncodeCode(unitGauss(r, 64), nil), 64)
	f.Add(EncodeCode(unitGauss(r, 100), unitGauss(r, 100)), 100)
	f.Add([]byte{}, 0)
	f.Add([]byte{1, 1, 0, 0}, -3)
	f.Fuzz(func(t *testing.T, b []byte, d int) {
		if d > 1<<16 {
			d = 1 << 16
		}
		bits, m, ok := decodeCode(nil, b, d)
		if !ok {
			if len(bits) != 0 {
				t.Fatal("a rejected code appended words")
			}
			return
		}
		if len(bits) != codeWords(d) {
			t.Fatalf("%d words for %d dimensions", len(bits), d)
		}
		q := make([]float32, d)
		q[0] = 1
		for _, dist := range []store.Distance{store.Cosine, store.L2, store.InnerProduct} {
			e := NewEstimator(dist, q, nil)
			if est := e.estimate(bits, &m); math.IsNaN(float64(est)) {
				t.Fatalf("%s estimate is NaN", dist)
			}
		}
	})
}

// TestSnapshotPartsHoldAnyItem: a part is cut after the item that takes
// it past snapshotPart, whatever that item holds: more codes than the
// part's first item, or a long key (found in review: serialize wrote past
// its buffer).
func TestSnapshotPartsHoldAnyItem(t *testing.T) {
	const dims = 1536
	v := make([]float32, dims)
	v[0] = 1
	bits, m, _ := decodeCode(nil, EncodeCode(v, nil), dims)
	c := code{bits: bits, meta: m}
	for _, tc := range []struct {
		name      string
		n, keyLen func(int) int
	}{
		{"first item 1 code, then 3", func(i int) int { return min(i+1, 3) }, func(int) int { return 8 }},
		{"one code each, long keys", func(int) int { return 1 }, func(i int) int { return 300 + i%200 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix := newCodeIndex(dims, nil)
			for i := range 20000 {
				codes := make([]code, tc.n(i))
				for j := range codes {
					codes[j] = c
				}
				ix.add("ns", fmt.Sprintf("%0*d", tc.keyLen(i), i), 1, codes)
			}
			parts := ix.serialize(1)
			if len(parts) < 2 {
				t.Fatalf("%d parts: the test needs items across a part boundary", len(parts))
			}
			again := newCodeIndex(dims, nil)
			for _, p := range parts {
				if err := again.deserialize(p, 1); err != nil {
					t.Fatal(err)
				}
			}
			if again.live != ix.live || len(again.meta) != len(ix.meta) {
				t.Fatalf("%d items, %d codes after a round trip; want %d, %d", again.live, len(again.meta), ix.live, len(ix.meta))
			}
		})
	}
}

// FuzzSnapshotPart feeds arbitrary snapshot parts to the deserializer: it
// loads or refuses them, never panics, and a serialized index round-trips.
func FuzzSnapshotPart(f *testing.F) {
	r := rand.New(rand.NewPCG(5, 5))
	t0 := newCodeIndex(70, nil)
	for i := range 3 {
		bits, m, _ := decodeCode(nil, EncodeCode(unitGauss(r, 70), nil), 70)
		t0.add("ns", fmt.Sprint(i), int64(i), []code{{bits: bits, meta: m}})
	}
	for _, p := range t0.serialize(1) {
		f.Add(p[:len(p)-4]) // the fuzzer's bytes get their checksum below
	}
	f.Add([]byte{})
	f.Add([]byte{2, 'n', 's', 1, 'k', 2, 1})
	f.Add(append([]byte(snapshotMagic), 70, 1, 2, 'n', 's', 1, 'k', 2, 1))
	f.Fuzz(func(t *testing.T, p []byte) {
		ix := newCodeIndex(70, nil)
		// With a good checksum, so that the decoder behind it is fuzzed.
		if err := ix.deserialize(sealPart(p), 1); err != nil {
			return
		}
		parts := ix.serialize(1)
		again := newCodeIndex(70, nil)
		for _, q := range parts {
			if err := again.deserialize(q, 1); err != nil {
				t.Fatalf("a serialized index does not load: %v", err)
			}
		}
		if again.live != ix.live || again.sorted != ix.sorted || !slices.Equal(again.bits, ix.bits) || !slices.Equal(again.meta, ix.meta) {
			t.Fatal("the index changed in a round trip")
		}
		for i, s := range ix.slots {
			a := again.slots[i]
			if again.names[a.ns] != ix.names[s.ns] || !bytes.Equal(again.keyOf(&a), ix.keyOf(&s)) || a.updated != s.updated || a.n != s.n {
				t.Fatalf("slot %d changed in a round trip: %+v, want %+v", i, a, s)
			}
		}
	})
}
