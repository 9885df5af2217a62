package topicvec

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
)

// Set is a data set of items vectors of dims dimensions in topics topics.
// It is an embeddings.Embedder mapping the text "v<i>" to item i and
// "q<j>" to query j, so that a benchmark measures the store, not an
// embedder.
type Set struct {
	dims, items int
	common      []float32
	centroids   [][]float32
}

// New returns the set of items vectors of dims dimensions in topics
// topics. The first topics of a larger set are the topics of a smaller
// one with the same items and dims.
func New(items, dims, topics int) *Set {
	s := &Set{dims: dims, items: items}
	r := rand.New(rand.NewPCG(7, 7))
	s.common = unitGauss(r, dims)
	for range topics {
		s.centroids = append(s.centroids, unitGauss(r, dims))
	}
	return s
}

// Topics is the number of topics.
func (s *Set) Topics() int { return len(s.centroids) }

// Item is the vector of item i.
func (s *Set) Item(i int) []float32 {
	r := rand.New(rand.NewPCG(uint64(i), 1))
	c := s.centroids[r.IntN(len(s.centroids))]
	base := make([]float32, s.dims)
	for j := range base {
		base[j] = 0.6*s.common[j] + 0.6*c[j]
	}
	return s.mix(r, base, 0.45)
}

// Query is the vector of query j: one of the items, with noise.
func (s *Set) Query(j int) []float32 {
	r := rand.New(rand.NewPCG(uint64(j), 2))
	return s.mix(r, s.Item(r.IntN(s.items)), 0.35)
}

// EmbedDocuments implements embeddings.Embedder.
func (s *Set) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = s.vec(t)
	}
	return out, nil
}

// EmbedQuery implements embeddings.Embedder.
func (s *Set) EmbedQuery(_ context.Context, text string) ([]float32, error) {
	return s.vec(text), nil
}

// Dims implements embeddings.Embedder.
func (s *Set) Dims() int { return s.dims }

// Name implements embeddings.Embedder.
func (s *Set) Name() string {
	return fmt.Sprintf("topics:%dx%dx%d", s.items, s.dims, len(s.centroids))
}

// vec is the vector a text names ("v<i>", "q<j>"); any other text is
// item 0.
func (s *Set) vec(t string) []float32 {
	var n int
	if len(t) > 1 {
		n, _ = strconv.Atoi(t[1:])
	}
	if len(t) > 0 && t[0] == 'q' {
		return s.Query(n)
	}
	return s.Item(n)
}

func (s *Set) mix(r *rand.Rand, base []float32, noise float32) []float32 {
	v := unitGauss(r, s.dims)
	var n float64
	for i := range v {
		v[i] = base[i] + noise*v[i]
		n += float64(v[i]) * float64(v[i])
	}
	n = math.Sqrt(n)
	for i := range v {
		v[i] /= float32(n)
	}
	return v
}

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
