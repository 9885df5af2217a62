package openai

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkEmbedDocuments measures a 100-text call against the local test
// server at 1536 dimensions: request encoding, the server's work (hashing
// embedder and JSON or base64 encoding) and response decoding. The float
// variant is the baseline for base64.
func BenchmarkEmbedDocuments(b *testing.B) {
	texts := make([]string, 100)
	for i := range texts {
		texts[i] = fmt.Sprintf("benchmark text number %d about agents and their memories", i)
	}
	for _, b64 := range []bool{false, true} {
		name := "float"
		if b64 {
			name = "base64"
		}
		b.Run(name, func(b *testing.B) {
			s := newAPIServer(b)
			opts := s.options()
			opts.Dimensions = 1536
			opts.Base64 = b64
			e, err := New(opts)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.EmbedDocuments(context.Background(), texts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(texts))/b.Elapsed().Seconds(), "texts/s")
		})
	}
}
