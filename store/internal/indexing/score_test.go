package indexing

import (
	"math"
	"testing"

	"github.com/memvault/memvault/store"
)

func TestScore(t *testing.T) {
	a := []float32{1, 2, 3, 4, 5}
	b := []float32{-1, 0.5, 2, 0, 1}
	// Hand-computed: a·b = -1+1+6+0+5 = 11, |a|² = 55, |b|² = 6.25,
	// |a-b|² = 4+2.25+1+16+16 = 39.25.
	cases := []struct {
		d    store.Distance
		want float64
	}{
		{store.Cosine, 11 / math.Sqrt(55*6.25)},
		{"", 11 / math.Sqrt(55*6.25)},
		{store.L2, -math.Sqrt(39.25)},
		{store.InnerProduct, 11},
	}
	for _, c := range cases {
		if got := Score(c.d, a, b); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("Score(%q) = %v, want %v", c.d, got, c.want)
		}
	}
	if got := Score(store.Cosine, []float32{0, 0}, []float32{1, 1}); got != 0 {
		t.Errorf("cosine with a zero vector = %v, want 0", got)
	}
	if got := Score(store.Cosine, a, a); math.Abs(got-1) > 1e-6 {
		t.Errorf("cosine with itself = %v", got)
	}
	if got := Score(store.L2, a, a); got != 0 {
		t.Errorf("l2 with itself = %v", got)
	}
}

func TestDistanceValid(t *testing.T) {
	for _, d := range []store.Distance{"", store.Cosine, store.L2, store.InnerProduct} {
		if err := ValidateDistance(d); err != nil {
			t.Errorf("ValidateDistance(%q) = %v", d, err)
		}
	}
	if err := ValidateDistance("manhattan"); err == nil {
		t.Error("unknown distance accepted")
	}
}

func TestQueryScorerMatchesScore(t *testing.T) {
	q := []float32{0.5, -1, 2, 0, 3, 1.25, -0.75}
	for _, v := range [][]float32{{1, 2, 3, 4, 5, 6, 7}, {0, 0, 0, 0, 0, 0, 0}, {-0.5, 1, -2, 0, -3, -1.25, 0.75}} {
		for _, d := range []store.Distance{store.Cosine, store.L2, store.InnerProduct} {
			want := Score(d, v, q)
			if got := NewQueryScorer(d, q).Score(v, VectorNorm(v)); math.Abs(got-want) > 1e-6 {
				t.Errorf("%s: QueryScorer %v, Score %v", d, got, want)
			}
		}
	}
}

func BenchmarkScoreCosine256(b *testing.B) {
	x, y := make([]float32, 256), make([]float32, 256)
	for i := range x {
		x[i], y[i] = float32(i%7)-3, float32(i%5)-2
	}
	b.ReportAllocs()
	b.SetBytes(256 * 4)
	for b.Loop() {
		_ = Score(store.Cosine, x, y)
	}
}

func BenchmarkQueryScorerCosine256(b *testing.B) {
	x, y := make([]float32, 256), make([]float32, 256)
	for i := range x {
		x[i], y[i] = float32(i%7)-3, float32(i%5)-2
	}
	s, n := NewQueryScorer(store.Cosine, y), VectorNorm(x)
	b.ReportAllocs()
	b.SetBytes(256 * 4)
	for b.Loop() {
		_ = s.Score(x, n)
	}
}
