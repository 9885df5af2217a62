package serde

import (
	"bytes"
	"math/big"
	"strings"
	"testing"

	"github.com/memvault/memvault/internal/aead"
)

// sealRecorder is the serializer's real cipher, keeping the plaintext
// slice each Encrypt was given, to look at it after the call returned.
type sealRecorder struct {
	aead.Cipher
	sealed [][]byte
}

func (r *sealRecorder) Encrypt(plaintext, aad []byte) ([]byte, error) {
	r.sealed = append(r.sealed, plaintext)
	return r.Cipher.Encrypt(plaintext, aad)
}

// ownBytes is a serializer that returns the caller's own bytes as its
// payload, as a custom codec may.
type ownBytes struct{ JSONPlus }

func (ownBytes) DumpsTyped(v any) (string, []byte, error) {
	if b, ok := v.([]byte); ok {
		return "custom", b, nil
	}
	return JSONPlus{}.DumpsTyped(v)
}

// TestDumpsTypedWithWipesSealedPlaintext: the plaintext Encrypted seals
// is zeroed once sealed, with MsgPack inside as with JSONPlus. Before,
// only JSONPlus's was: MsgPack's payload (a copy MsgPack.DumpsTyped made,
// and for an integer beyond 64 bits the "json" it wrote instead) went to
// the garbage collector holding the plaintext. A custom codec's payload
// is left alone: it may be the caller's own memory.
func TestDumpsTypedWithWipesSealedPlaintext(t *testing.T) {
	huge := new(big.Int).Lsh(big.NewInt(1), 100)
	secret := "SECRET-" + strings.Repeat("plaintext ", 20)
	long := "SECRET-" + strings.Repeat("plaintext ", 400) // outgrows the pooled buffer
	for _, tc := range []struct {
		name  string
		inner Serializer
		v     any
		typ   string
	}{
		{"JSONPlus", JSONPlus{}, map[string]any{"a": secret}, "json+mvgcm"},
		{"MsgPack", MsgPack{}, map[string]any{"a": secret}, "msgpack+mvgcm"},
		{"*MsgPack", &MsgPack{}, map[string]any{"a": secret}, "msgpack+mvgcm"},
		{"MsgPack outgrowing", MsgPack{}, map[string]any{"a": long}, "msgpack+mvgcm"},
		{"MsgPack beyond 64 bits", MsgPack{}, map[string]any{"a": secret, "n": huge}, "json+mvgcm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := NewEncrypted(tc.inner, keyring(t, testKey))
			if err != nil {
				t.Fatal(err)
			}
			rec := &sealRecorder{Cipher: e.write}
			e.write = rec
			typ, ct, err := e.DumpsTypedWith(tc.v, []byte("aad"))
			if err != nil {
				t.Fatal(err)
			}
			if typ != tc.typ {
				t.Fatalf("type %q, want %q", typ, tc.typ)
			}
			if len(rec.sealed) != 1 || len(rec.sealed[0]) == 0 {
				t.Fatalf("sealed %d payloads", len(rec.sealed))
			}
			if p := rec.sealed[0]; bytes.ContainsFunc(p, func(r rune) bool { return r != 0 }) {
				t.Fatalf("the sealed plaintext (%d bytes) is not wiped: %q", len(p), p[:min(len(p), 40)])
			}
			got, err := e.LoadsTypedWith(typ, ct, []byte("aad"))
			if err != nil {
				t.Fatal(err)
			}
			if m, ok := got.(map[string]any); !ok || m["a"] != tc.v.(map[string]any)["a"] {
				t.Fatalf("round trip: %v", got)
			}
		})
	}
	t.Run("custom codec", func(t *testing.T) {
		e, err := NewEncrypted(ownBytes{}, keyring(t, testKey))
		if err != nil {
			t.Fatal(err)
		}
		mine := []byte(secret)
		if _, _, err := e.DumpsTypedWith(mine, []byte("aad")); err != nil {
			t.Fatal(err)
		}
		if string(mine) != secret {
			t.Fatalf("the caller's bytes were changed: %q", mine[:min(len(mine), 40)])
		}
	})
}
