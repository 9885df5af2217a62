package serde

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/crypto"
)

var benchSizes = []int{1 << 10, 64 << 10, 1 << 20}

// benchState builds a chat-like state whose JSON encoding is about n bytes.
func benchState(n int) map[string]any {
	var msgs []any
	size := 0
	for i := 0; size < n; i++ {
		content := strings.Repeat(fmt.Sprintf("message %d says hello; ", i), 8)
		msgs = append(msgs, map[string]any{"role": "user", "content": content, "id": int64(i), "score": 0.5})
		size += len(content) + 50
	}
	return map[string]any{"messages": msgs, "step": int64(len(msgs))}
}

func benchCodec(b *testing.B, s Serializer, decode bool) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			v := benchState(n)
			typ, data, err := s.DumpsTyped(v)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if decode {
					_, err = s.LoadsTyped(typ, data)
				} else {
					_, _, err = s.DumpsTyped(v)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkJSONPlusEncode measures DumpsTyped of a chat state (MB/s of JSON).
func BenchmarkJSONPlusEncode(b *testing.B) { benchCodec(b, JSONPlus{}, false) }

// BenchmarkJSONPlusDecode measures LoadsTyped of the same payloads.
func BenchmarkJSONPlusDecode(b *testing.B) { benchCodec(b, JSONPlus{}, true) }

// BenchmarkMsgPackEncode measures MsgPack's DumpsTyped.
func BenchmarkMsgPackEncode(b *testing.B) { benchCodec(b, MsgPack{}, false) }

// BenchmarkMsgPackDecode measures msgpack LoadsTyped.
func BenchmarkMsgPackDecode(b *testing.B) { benchCodec(b, MsgPack{}, true) }

// BenchmarkRawAESGCM is the baseline for the encryption layer:
// crypto/cipher AES-256-GCM seal then open, random 12-byte nonce, each
// returning a new slice (as a serializer must).
func BenchmarkRawAESGCM(b *testing.B) {
	blk, _ := aes.NewCipher([]byte(testKey))
	g, _ := cipher.NewGCM(blk)
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			pt := make([]byte, n)
			nonce := make([]byte, g.NonceSize())
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := rand.Read(nonce); err != nil {
					b.Fatal(err)
				}
				ct := g.Seal(nil, nonce, pt, nil)
				if _, err := g.Open(nil, nonce, ct, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func benchEncrypted(b *testing.B, e *Encrypted) {
	aad := testAAD("blob", "thread-1", "", "messages", "00000000000000000000000000000002.0.1")
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			v := make([]byte, n) // "bytes": the inner codec is a copy
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				typ, data, err := e.DumpsTypedWith(v, aad)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := e.LoadsTypedWith(typ, data, aad); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEncryptedEnvelope is an Encrypted dump+load round trip of raw
// bytes with the envelope (HKDF-derived record key, AES-256-GCM, AAD): the cost of
// the encryption layer, to compare with BenchmarkRawAESGCM.
func BenchmarkEncryptedEnvelope(b *testing.B) {
	benchEncrypted(b, encrypted(b, keyring(b, testKey)))
}

// BenchmarkEncryptedAESGCM is the same round trip in LangGraph "aes" GCM mode.
func BenchmarkEncryptedAESGCM(b *testing.B) {
	benchEncrypted(b, encrypted(b, keyring(b, testKey), WithDangerousLangGraphAES(crypto.ModeGCM)))
}

// BenchmarkEncryptedJSONState is the whole stack: JSONPlus plus envelope,
// MB/s of JSON.
func BenchmarkEncryptedJSONState(b *testing.B) {
	e := encrypted(b, keyring(b, testKey))
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			v := benchState(n)
			_, data, _ := JSONPlus{}.DumpsTyped(v)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				typ, ct, err := e.DumpsTypedWith(v, nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := e.LoadsTypedWith(typ, ct, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEncryptionOverhead interleaves a raw AES-GCM round trip and an
// Encrypted (envelope) round trip of 64 KiB, op by op, so that both see the
// same machine load, and reports the envelope's cost over raw AES-GCM in
// percent (target: under 15%), computed from each side's fastest op, which
// is robust to other processes on a shared machine.
func BenchmarkEncryptionOverhead(b *testing.B) {
	const n = 64 << 10
	blk, _ := aes.NewCipher([]byte(testKey))
	g, _ := cipher.NewGCM(blk)
	e := encrypted(b, keyring(b, testKey))
	aad := testAAD("blob", "thread-1", "", "messages", "00000000000000000000000000000002.0.1")
	pt := make([]byte, n)
	nonce := make([]byte, g.NonceSize())
	var raw, enc time.Duration = 1 << 62, 1 << 62
	b.SetBytes(2 * n)
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		if _, err := rand.Read(nonce); err != nil {
			b.Fatal(err)
		}
		ct := g.Seal(nil, nonce, pt, nil)
		if _, err := g.Open(nil, nonce, ct, nil); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		typ, data, err := e.DumpsTypedWith(pt, aad)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.LoadsTypedWith(typ, data, aad); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		raw = min(raw, t1.Sub(t0))
		enc = min(enc, t2.Sub(t1))
	}
	b.ReportMetric(100*(float64(enc)/float64(raw)-1), "%overhead")
	b.ReportMetric(float64(raw.Nanoseconds()), "raw-min-ns")
	b.ReportMetric(float64(enc.Nanoseconds()), "envelope-min-ns")
}

// BenchmarkCheckValue is what checkpointer/durable pays to check that a
// ~1 KiB state encodes before queuing it: CheckValue on an encrypting
// serializer ("check"), beside what it paid before, the encrypting
// serializer's whole DumpsTyped ("dumps": encoded, sealed, copied), and
// the plain codec's DumpsTyped as the raw baseline.
func BenchmarkCheckValue(b *testing.B) {
	e := encrypted(b, keyring(b, testKey))
	v := benchState(1 << 10)
	for _, c := range []struct {
		name string
		run  func() error
	}{
		{"raw-jsonplus-dumps", func() error { _, _, err := JSONPlus{}.DumpsTyped(v); return err }},
		{"dumps", func() error { _, _, err := e.DumpsTyped(v); return err }},
		{"check", func() error { return CheckValue(e, v) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
