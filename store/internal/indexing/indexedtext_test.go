package indexing

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memvault/memvault/embeddings"
)

// bigText is about n bytes of varied words.
func bigText(n int) string {
	words := strings.Fields("carol peanuts insulin diabetes ünïcödé 東京 email phone invoice order shipped berlin refund")
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(words[i%len(words)])
		b.WriteString(string(rune('a' + i%26)))
		b.WriteByte(' ')
	}
	return b.String()
}

// TestEmbeddingABigValueIsBounded: a 16 MB field costs what its first
// MaxIndexedTextBytes cost (it took ~1.9 GB and 13 s before the limit), and
// a done context stops a put before it embeds anything.
func TestEmbeddingABigValueIsBounded(t *testing.T) {
	e := embeddings.NewUnkeyedHashing(256)
	huge := bigText(16 << 20)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	vecs, err := EmbedDocuments(context.Background(), e, 256, []string{huge})
	runtime.ReadMemStats(&after)
	if err != nil || len(vecs) != 1 {
		t.Fatal(err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Fatalf("embedding a 16 MB field allocated %d MB", alloc>>20)
	}
	want, _ := e.EmbedQuery(context.Background(), IndexedText(huge))
	for i := range want {
		if vecs[0][i] != want[i] {
			t.Fatal("the field was not embedded as its first MaxIndexedTextBytes")
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := EmbedDocuments(ctx, e, 256, []string{huge}); !errors.Is(err, context.Canceled) {
		t.Fatalf("EmbedDocuments with a done context = %v", err)
	}
}

func TestIndexedTextCutsAtACharacter(t *testing.T) {
	s := strings.Repeat("é", MaxIndexedTextBytes) // 2 bytes each
	got := IndexedText("x" + s)
	if len(got) > MaxIndexedTextBytes || !utf8.ValidString(got) || !strings.HasPrefix("x"+s, got) {
		t.Fatalf("cut to %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
	if IndexedText("short") != "short" {
		t.Fatal("a short text was changed")
	}
}

// BenchmarkEmbedMB reports the bytes the hashing embedder allocates per MB
// of text, alone (raw) and through the store's limit (store).
func BenchmarkEmbedMB(b *testing.B) {
	text := bigText(1 << 20)
	e := embeddings.NewUnkeyedHashing(256)
	b.Run("raw", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			e.Embed(text)
		}
	})
	b.Run("store", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = EmbedDocuments(context.Background(), e, 256, []string{text})
		}
	})
}
