package embeddings

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"testing"
)

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func randomVec(r *rand.Rand, d int) []float32 {
	v := make([]float32, d)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// TestSealedIsOrthogonal: sealing keeps every inner product (so norms,
// cosines and L2 distances) at every dimension, powers of two or not.
func TestSealedIsOrthogonal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	secret := bytes.Repeat([]byte{7}, SealKeySize)
	for _, d := range []int{1, 3, 64, 256, 768, 1000, 1536, 3072} {
		s, err := NewSealed(NewUnkeyedHashing(d), secret, "k")
		if err != nil {
			t.Fatal(err)
		}
		for range 20 {
			a, b := randomVec(r, d), randomVec(r, d)
			sa, _ := s.Seal(a)
			sb, _ := s.Seal(b)
			want, got := dot(a, b), dot(sa, sb)
			scale := math.Sqrt(dot(a, a) * dot(b, b))
			if math.Abs(got-want) > 1e-5*scale {
				t.Fatalf("d=%d: <Qa,Qb> = %v, <a,b> = %v", d, got, want)
			}
			if n := dot(sa, sa); math.Abs(n-dot(a, a)) > 1e-5*dot(a, a) {
				t.Fatalf("d=%d: |Qa|² = %v, |a|² = %v", d, n, dot(a, a))
			}
		}
	}
}

// TestSealedMovesVectorsOutOfTheModelSpace: a sealed vector is about as
// far from its public vector as a random direction (cosine near 0), the
// same key seals the same way, and another key another way.
func TestSealedMovesVectorsOutOfTheModelSpace(t *testing.T) {
	ctx := context.Background()
	pub := NewUnkeyedHashing(256)
	s1, _ := NewSealed(pub, bytes.Repeat([]byte{1}, SealKeySize), "k1")
	s1b, _ := NewSealed(pub, bytes.Repeat([]byte{1}, SealKeySize), "k1")
	s2, _ := NewSealed(pub, bytes.Repeat([]byte{2}, SealKeySize), "k2")
	text := "Carol is allergic to peanuts and takes insulin for her diabetes"
	p, _ := pub.EmbedQuery(ctx, text)
	a, _ := s1.EmbedQuery(ctx, text)
	b, _ := s1b.EmbedQuery(ctx, text)
	c, _ := s2.EmbedQuery(ctx, text)
	if got := dot(p, a); math.Abs(got) > 0.25 {
		t.Fatalf("sealed vector still close to the public one: cosine %v", got)
	}
	if got := dot(a, b); math.Abs(got-1) > 1e-5 {
		t.Fatalf("same key sealed differently: cosine %v", got)
	}
	if got := dot(a, c); math.Abs(got) > 0.25 {
		t.Fatalf("two keys seal alike: cosine %v", got)
	}
	if s1.Name() != "hash:256+sealed:k1" || s1.Dims() != 256 {
		t.Fatalf("name %q dims %d", s1.Name(), s1.Dims())
	}
	if _, err := s1.Seal(make([]float32, 3)); err == nil {
		t.Fatal("Seal of a wrong-sized vector succeeded")
	}
	if _, err := NewSealed(pub, []byte("short"), "k"); err == nil {
		t.Fatal("NewSealed with a short secret succeeded")
	}
}

// TestKeyedHashingKeepsQuality: keyed hashing compares texts as the
// public embedder does (the same nearest neighbour for every query of a
// small corpus), while its vectors are unrelated to the public ones.
func TestKeyedHashingKeepsQuality(t *testing.T) {
	ctx := context.Background()
	pub := NewUnkeyedHashing(256)
	keyed, err := NewKeyedHashing(256, bytes.Repeat([]byte{9}, HashingKeySize), "kid")
	if err != nil {
		t.Fatal(err)
	}
	if !keyed.Keyed() || pub.Keyed() || keyed.Name() != "hash:256+keyed:kid" {
		t.Fatalf("keyed %v/%v name %q", keyed.Keyed(), pub.Keyed(), keyed.Name())
	}
	docs := []string{
		"the customer prefers email over phone calls",
		"order 1234 was shipped to Berlin on Monday",
		"allergic to peanuts, carries an epipen",
		"wants the invoice in euros, not dollars",
		"reset the password twice last week",
	}
	queries := []string{"how to contact the customer: email or phone", "where was the order shipped", "peanut allergy", "invoice currency", "password reset"}
	nearest := func(e *Hashing, q string) int {
		qv, _ := e.EmbedQuery(ctx, q)
		best, bestScore := -1, -2.0
		for i, d := range docs {
			dv, _ := e.EmbedQuery(ctx, d)
			if s := dot(qv, dv); s > bestScore {
				best, bestScore = i, s
			}
		}
		return best
	}
	for i, q := range queries {
		if a, b := nearest(pub, q), nearest(keyed, q); a != i || b != i {
			t.Errorf("%q: public finds doc %d, keyed doc %d, want %d", q, a, b, i)
		}
	}
	p, _ := pub.EmbedQuery(ctx, docs[2])
	k, _ := keyed.EmbedQuery(ctx, docs[2])
	if c := dot(p, k); c > 0.3 {
		t.Fatalf("keyed vector close to the public one: cosine %v", c)
	}
	if _, err := NewKeyedHashing(256, []byte("short"), "k"); err == nil {
		t.Fatal("NewKeyedHashing with a short secret succeeded")
	}
}

// BenchmarkSeal1536 seals an OpenAI-sized vector; BenchmarkCopy1536 is the
// baseline of converting it through float64 and back without transforming.
func BenchmarkSeal1536(b *testing.B) {
	s, _ := NewSealed(fixedDims(1536), bytes.Repeat([]byte{3}, SealKeySize), "k")
	v := randomVec(rand.New(rand.NewPCG(1, 1)), 1536)
	b.ReportAllocs()
	for b.Loop() {
		_, _ = s.Seal(v)
	}
}

func BenchmarkCopy1536(b *testing.B) {
	v := randomVec(rand.New(rand.NewPCG(1, 1)), 1536)
	b.ReportAllocs()
	for b.Loop() {
		x := make([]float64, len(v))
		for i, f := range v {
			x[i] = float64(f)
		}
		out := make([]float32, len(v))
		for i, f := range x {
			out[i] = float32(f)
		}
	}
}

// BenchmarkKeyedHashing and BenchmarkPublicHashing embed the same text.
func BenchmarkKeyedHashing(b *testing.B) {
	h, _ := NewKeyedHashing(256, bytes.Repeat([]byte{9}, HashingKeySize), "k")
	benchEmbed(b, h)
}

func BenchmarkPublicHashing(b *testing.B) { benchEmbed(b, NewUnkeyedHashing(256)) }

func benchEmbed(b *testing.B, h *Hashing) {
	text := "The customer prefers email over phone calls and asked us to resend the invoice for order 1234 in euros."
	b.ReportAllocs()
	for b.Loop() {
		h.Embed(text)
	}
}

// fixedDims is an Embedder of a given size, for sealing arbitrary vectors.
type fixedDims int

func (f fixedDims) Dims() int    { return int(f) }
func (f fixedDims) Name() string { return "fixed" }
func (f fixedDims) EmbedDocuments(context.Context, []string) ([][]float32, error) {
	return nil, nil
}
func (f fixedDims) EmbedQuery(context.Context, string) ([]float32, error) { return nil, nil }

// sealedGoldenSum is the SHA-256 of sealedGoldenVectors' output: sealed
// vectors are stored, so the transform a secret selects must never change
// (a store's vectors sealed by an older build would no longer match its
// queries).
const sealedGoldenSum = "ea75925abc6b1360f79c78e9f6cf4aa171086317ec4abdd27c6f5bd20f720622"

func sealedGoldenVectors(t *testing.T) []byte {
	t.Helper()
	r := rand.New(rand.NewPCG(3, 4))
	var out []byte
	for _, d := range []int{1, 4, 64, 256, 1000, 1536} {
		s, err := NewSealed(NewUnkeyedHashing(d), bytes.Repeat([]byte{9}, SealKeySize), "golden")
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			v, err := s.Seal(randomVec(r, d))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range v {
				out = binary.LittleEndian.AppendUint32(out, math.Float32bits(f))
			}
		}
	}
	return out
}

// TestSealedGolden pins the transform of a fixed secret.
func TestSealedGolden(t *testing.T) {
	sum := sha256.Sum256(sealedGoldenVectors(t))
	if got := hex.EncodeToString(sum[:]); got != sealedGoldenSum {
		t.Errorf("sealed vectors changed: SHA-256 %s, want %s", got, sealedGoldenSum)
	}
}
