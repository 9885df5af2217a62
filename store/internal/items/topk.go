package items

import "slices"

// TopK keeps the k smallest values pushed (by compare) in a bounded
// max-heap whose root is the worst value kept.
type TopK[T any] struct {
	k       int
	compare func(a, b T) int
	h       []T
}

// NewTopK returns an empty TopK that keeps k values.
func NewTopK[T any](k int, compare func(a, b T) int) *TopK[T] {
	return &TopK[T]{k: k, compare: compare, h: make([]T, 0, min(k, 1024))}
}

// Push offers x: it is kept while it is among the k smallest.
func (t *TopK[T]) Push(x T) {
	if t.k <= 0 {
		return
	}
	if len(t.h) < t.k {
		t.h = append(t.h, x)
		for i := len(t.h) - 1; i > 0; {
			p := (i - 1) / 2
			if t.compare(t.h[i], t.h[p]) <= 0 {
				break
			}
			t.h[i], t.h[p] = t.h[p], t.h[i]
			i = p
		}
		return
	}
	if t.compare(x, t.h[0]) >= 0 {
		return
	}
	t.h[0] = x
	for i, n := 0, len(t.h); ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		j := l
		if r := l + 1; r < n && t.compare(t.h[r], t.h[l]) > 0 {
			j = r
		}
		if t.compare(t.h[j], t.h[i]) <= 0 {
			break
		}
		t.h[i], t.h[j] = t.h[j], t.h[i]
		i = j
	}
}

// Sorted returns the kept values, smallest first.
func (t *TopK[T]) Sorted() []T {
	slices.SortFunc(t.h, t.compare)
	return t.h
}

// Len is the number of values kept.
func (t *TopK[T]) Len() int { return len(t.h) }
