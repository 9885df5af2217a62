package items

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestTopK(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 5, 100, 1000} {
		for _, k := range []int{0, 1, 3, 10, 100, 2000} {
			vals := make([]int, n)
			for i := range vals {
				vals[i] = r.IntN(50) // duplicates on purpose
			}
			top := NewTopK(k, cmp.Compare[int])
			for _, v := range vals {
				top.Push(v)
			}
			want := slices.Clone(vals)
			slices.Sort(want)
			want = want[:min(k, n)]
			if got := top.Sorted(); !slices.Equal(got, want) {
				t.Fatalf("n=%d k=%d: got %v, want %v", n, k, got, want)
			}
		}
	}
}
