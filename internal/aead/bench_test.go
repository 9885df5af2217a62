package aead

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"fmt"
	"testing"

	"github.com/memvault/memvault/crypto"
)

var benchSizes = []int{1 << 10, 64 << 10, 1 << 20}

// BenchmarkRawGCM is the baseline: crypto/cipher AES-256-GCM seal+open with
// a random nonce, no key derivation, each returning a fresh slice as any
// Cipher must.
func BenchmarkRawGCM(b *testing.B) {
	blk, _ := aes.NewCipher([]byte(katKey))
	g, _ := cipher.NewGCM(blk)
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			pt := make([]byte, n)
			nonce := make([]byte, 12)
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				rand.Read(nonce)
				ct := g.Seal(nil, nonce, pt, nil)
				if _, err := g.Open(nil, nonce, ct, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func benchCipher(b *testing.B, c Cipher, aad []byte) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			pt := make([]byte, n)
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				ct, err := c.Encrypt(pt, aad)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := c.Decrypt(ct, aad); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEnvelope is an envelope encrypt+decrypt round trip.
func BenchmarkEnvelope(b *testing.B) {
	e, _ := NewEnvelope(ring(b, katKey))
	benchCipher(b, e, []byte("memvault/blob/v1\x00thread\x00ns\x00channel\x00version"))
}

// BenchmarkAESGCM is a LangGraph "aes" round trip written in GCM mode.
func BenchmarkAESGCM(b *testing.B) {
	c, _ := NewAES(ring(b, katKey), crypto.ModeGCM)
	benchCipher(b, c, nil)
}

// BenchmarkAESEAX is a LangGraph "aes" round trip in EAX mode (CMAC+CTR,
// no hardware GHASH: slower than GCM).
func BenchmarkAESEAX(b *testing.B) {
	c, _ := NewAES(ring(b, katKey), crypto.ModeEAX)
	benchCipher(b, c, nil)
}
