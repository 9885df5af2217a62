package embeddings

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// benchText returns a deterministic text of n words drawn from a small
// vocabulary with a linear congruential generator.
func benchText(n int, seed uint32) string {
	words := strings.Fields(`the agent stored a memory about user preferences and
		project deadlines while the database migration was running on the
		production cluster with encrypted backups rotated every night because
		latency budgets matter for semantic search over long conversation
		history including names places dates invoices flights and allergies`)
	var b strings.Builder
	x := seed
	for i := range n {
		x = x*1664525 + 1013904223
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[x>>16%uint32(len(words))])
	}
	return b.String()
}

// benchTexts returns n different 200-word texts and their total size.
func benchTexts(n int) ([]string, int) {
	texts := make([]string, n)
	size := 0
	for i := range texts {
		texts[i] = benchText(200, uint32(i))
		size += len(texts[i])
	}
	return texts, size
}

func reportTextsPerSecond(b *testing.B) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "texts/s")
}

// BenchmarkHashing200Words measures the hashing embedder on 200-word texts.
func BenchmarkHashing200Words(b *testing.B) {
	for _, dims := range []int{256, 1536} {
		b.Run("dims="+strconv.Itoa(dims), func(b *testing.B) {
			h := NewUnkeyedHashing(dims)
			texts, size := benchTexts(256)
			b.SetBytes(int64(size / len(texts)))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				h.Embed(texts[i%len(texts)])
				i++
			}
			reportTextsPerSecond(b)
		})
	}
}

// BenchmarkTokenizeBaseline is the floor for BenchmarkHashing200Words:
// lower-casing and splitting the same text with the standard library,
// without hashing anything.
func BenchmarkTokenizeBaseline(b *testing.B) {
	texts, size := benchTexts(256)
	b.SetBytes(int64(size / len(texts)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_ = strings.Fields(strings.ToLower(texts[i%len(texts)]))
		i++
	}
	reportTextsPerSecond(b)
}

// BenchmarkCachedHit measures a cache hit of a 200-word text: SHA-256 of the
// text, the LRU lookup and the copy of the vector.
func BenchmarkCachedHit(b *testing.B) {
	for _, dims := range []int{256, 1536} {
		b.Run("dims="+strconv.Itoa(dims), func(b *testing.B) {
			ctx := context.Background()
			c, err := NewCached(NewUnkeyedHashing(dims), 1024)
			if err != nil {
				b.Fatal(err)
			}
			text := benchText(200, 2)
			if _, err := c.EmbedQuery(ctx, text); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.EmbedQuery(ctx, text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCachedMiss measures a miss of a 200-word text: the hit path plus
// the hashing embedder and storing a copy, with evictions once the cache is
// full.
func BenchmarkCachedMiss(b *testing.B) {
	ctx := context.Background()
	c, err := NewCached(NewUnkeyedHashing(1536), 1024)
	if err != nil {
		b.Fatal(err)
	}
	texts, _ := benchTexts(4096)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		// Cycling through more texts than the cache holds makes every
		// lookup miss.
		if _, err := c.EmbedQuery(ctx, texts[i%len(texts)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkCloneVector is the cost of the defensive copy in every cache
// hit, for comparison with BenchmarkCachedHit.
func BenchmarkCloneVector(b *testing.B) {
	for _, dims := range []int{256, 1536} {
		b.Run("dims="+strconv.Itoa(dims), func(b *testing.B) {
			v := make([]float32, dims)
			b.SetBytes(int64(4 * dims))
			b.ReportAllocs()
			for b.Loop() {
				_ = slices.Clone(v)
			}
		})
	}
}

// BenchmarkRotation is the cost of applying a Rotation (what Sealed adds
// to every vector, and what a store adds per data subject to a vector
// written and to a search's query), and of making one from its secret.
func BenchmarkRotation(b *testing.B) {
	secret := make([]byte, SealKeySize)
	for _, dims := range []int{256, 1536} {
		b.Run("apply/dims="+strconv.Itoa(dims), func(b *testing.B) {
			r, err := NewRotation(secret, dims)
			if err != nil {
				b.Fatal(err)
			}
			v := make([]float32, dims)
			for i := range v {
				v[i] = float32(i%7) - 3
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.Apply(v); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("new/dims="+strconv.Itoa(dims), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := NewRotation(secret, dims); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
