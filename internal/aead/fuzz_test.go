package aead

import (
	"bytes"
	"errors"
	"testing"

	"github.com/memvault/memvault/crypto"
)

// FuzzEnvelope feeds arbitrary bytes to the envelope parser: it must never
// panic, and anything it accepts must be a genuine envelope (it cannot
// forge one, so only the seeded valid envelope opens).
func FuzzEnvelope(f *testing.F) {
	r := ring(f, katKey, "old-key-16-bytes")
	e, _ := NewEnvelope(r)
	e.rand = fixedRand // deterministic: fuzz workers rebuild this state
	valid, _ := e.Encrypt([]byte("hello"), []byte("aad"))
	f.Add(valid, []byte("aad"))
	f.Add(valid[:len(valid)-1], []byte("aad"))
	f.Add([]byte{}, []byte(nil))
	f.Add([]byte{EnvelopeV1}, []byte(nil))
	f.Add(append([]byte{2}, valid[1:]...), []byte("aad"))
	f.Add(make([]byte, envelopeOverhead), []byte(nil))
	f.Fuzz(func(t *testing.T, blob, aad []byte) {
		p, err := e.Decrypt(blob, aad)
		if err != nil {
			if !errors.Is(err, crypto.ErrDecrypt) {
				t.Fatalf("error %v is not crypto.ErrDecrypt", err)
			}
			return
		}
		if !bytes.Equal(blob, valid) || string(p) != "hello" {
			t.Fatalf("accepted forged envelope %x", blob)
		}
	})
}

// FuzzAES feeds arbitrary bytes to the LangGraph "aes" parser (both modes).
func FuzzAES(f *testing.F) {
	r := ring(f, katKey)
	c, _ := NewAES(r, crypto.ModeEAX)
	valid := unhex(f, "000102030405060708090a0b0c0d0e0f8ee76d82f558339f0a1b2b3ee26b5ee1a5d8639e")
	f.Add(valid)
	f.Add(valid[:32])
	f.Add(valid[:31])
	f.Add([]byte{})
	f.Add(make([]byte, 64))
	f.Fuzz(func(t *testing.T, blob []byte) {
		p, err := c.Decrypt(blob, nil)
		if err != nil {
			if !errors.Is(err, crypto.ErrDecrypt) {
				t.Fatalf("error %v is not crypto.ErrDecrypt", err)
			}
			return
		}
		if !bytes.Equal(blob, valid) || !bytes.Equal(p, []byte{0x81, 0xa1, 0x61, 0x01}) {
			t.Fatalf("accepted forged blob %x", blob)
		}
	})
}
