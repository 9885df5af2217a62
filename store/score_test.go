package store

import (
	"math"
	"testing"
	"time"
)

func TestScore(t *testing.T) {
	a := []float32{1, 2, 3, 4, 5}
	b := []float32{-1, 0.5, 2, 0, 1}
	// Hand-computed: a·b = -1+1+6+0+5 = 11, |a|² = 55, |b|² = 6.25,
	// |a-b|² = 4+2.25+1+16+16 = 39.25.
	cases := []struct {
		d    Distance
		want float64
	}{
		{Cosine, 11 / math.Sqrt(55*6.25)},
		{"", 11 / math.Sqrt(55*6.25)},
		{L2, -math.Sqrt(39.25)},
		{InnerProduct, 11},
	}
	for _, c := range cases {
		if got := Score(c.d, a, b); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("Score(%q) = %v, want %v", c.d, got, c.want)
		}
	}
	if got := Score(Cosine, []float32{0, 0}, []float32{1, 1}); got != 0 {
		t.Errorf("cosine with a zero vector = %v, want 0", got)
	}
	if got := Score(Cosine, a, a); math.Abs(got-1) > 1e-6 {
		t.Errorf("cosine with itself = %v", got)
	}
	if got := Score(L2, a, a); got != 0 {
		t.Errorf("l2 with itself = %v", got)
	}
}

func TestDistanceValid(t *testing.T) {
	for _, d := range []Distance{"", Cosine, L2, InnerProduct} {
		if err := ValidateDistance(d); err != nil {
			t.Errorf("ValidateDistance(%q) = %v", d, err)
		}
	}
	if err := ValidateDistance("manhattan"); err == nil {
		t.Error("unknown distance accepted")
	}
}

func TestTTLMinutes(t *testing.T) {
	cases := map[time.Duration]int{
		0: 0, -time.Minute: 0, time.Second: 1, 30 * time.Second: 1, 89 * time.Second: 1,
		90 * time.Second: 2, 150 * time.Second: 2, 10 * time.Minute: 10, 24 * time.Hour: 1440,
	}
	for d, want := range cases {
		if got := TTLMinutes(d); got != want {
			t.Errorf("TTLMinutes(%v) = %d, want %d", d, got, want)
		}
	}
}

func TestResolveTTL(t *testing.T) {
	m := time.Minute
	neg := -m
	zero := time.Duration(0)
	cfg := &TTLConfig{DefaultTTL: 5 * m}
	if d, err := ResolveTTL(cfg, nil); err != nil || d != 5*m {
		t.Errorf("default = %v, %v", d, err)
	}
	if d, err := ResolveTTL(cfg, &zero); err != nil || d != 0 {
		t.Errorf("explicit 0 = %v, %v", d, err)
	}
	if d, err := ResolveTTL(nil, nil); err != nil || d != 0 {
		t.Errorf("no config = %v, %v", d, err)
	}
	if _, err := ResolveTTL(nil, &m); err == nil {
		t.Error("TTL without config accepted")
	}
	if _, err := ResolveTTL(cfg, &neg); err == nil {
		t.Error("negative TTL accepted")
	}
	if got := (TTLConfig{}).SweepEvery(); got != DefaultSweepInterval {
		t.Errorf("SweepEvery default = %v", got)
	}
	if got := (TTLConfig{SweepInterval: -1}).SweepEvery(); got != 0 {
		t.Errorf("SweepEvery disabled = %v", got)
	}
	now := time.Unix(100, 0)
	if Expired(time.Time{}, now) || Expired(now.Add(time.Second), now) || !Expired(now, now) {
		t.Error("Expired boundaries wrong")
	}
}

func TestListNamespacesHelper(t *testing.T) {
	all := []Namespace{{"a", "b"}, {"a", "c"}, {"b"}, {"a", "b", "c"}}
	got := ListNamespaces(all, ListNamespacesOptions{Prefix: Namespace{"a"}, MaxDepth: 2, Limit: 1, Offset: 1})
	if len(got) != 1 || got[0].String() != "a.c" {
		t.Fatalf("got %v", got)
	}
	opt := ListNamespacesOptions{Suffix: Namespace{"*", "c"}}
	if !opt.Matches(Namespace{"a", "b", "c"}) || opt.Matches(Namespace{"c"}) {
		t.Fatal("suffix wildcard match wrong")
	}
}

func TestCloneValue(t *testing.T) {
	in := map[string]any{"l": []any{map[string]any{"x": 1}}, "typed": []int{1, 2}}
	out, err := CloneValue(in)
	if err != nil {
		t.Fatal(err)
	}
	out["l"].([]any)[0].(map[string]any)["x"] = 2
	if in["l"].([]any)[0].(map[string]any)["x"] != 1 {
		t.Fatal("clone shares memory with its source")
	}
	if !JSONEqual(out["typed"], []any{1, 2}) {
		t.Fatalf("typed slice cloned as %v", out["typed"])
	}
	if _, err := CloneValue(map[string]any{"f": math.Inf(1)}); err == nil {
		t.Fatal("infinity accepted")
	}
	if _, err := CloneValue(map[string]any{"f": func() {}}); err == nil {
		t.Fatal("func accepted")
	}
}

func TestQueryScorerMatchesScore(t *testing.T) {
	q := []float32{0.5, -1, 2, 0, 3, 1.25, -0.75}
	for _, v := range [][]float32{{1, 2, 3, 4, 5, 6, 7}, {0, 0, 0, 0, 0, 0, 0}, {-0.5, 1, -2, 0, -3, -1.25, 0.75}} {
		for _, d := range []Distance{Cosine, L2, InnerProduct} {
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
		_ = Score(Cosine, x, y)
	}
}

func BenchmarkQueryScorerCosine256(b *testing.B) {
	x, y := make([]float32, 256), make([]float32, 256)
	for i := range x {
		x[i], y[i] = float32(i%7)-3, float32(i%5)-2
	}
	s, n := NewQueryScorer(Cosine, y), VectorNorm(x)
	b.ReportAllocs()
	b.SetBytes(256 * 4)
	for b.Loop() {
		_ = s.Score(x, n)
	}
}
