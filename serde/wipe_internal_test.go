package serde

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
)

// failingMarshaler fails to encode, after the encoder wrote what comes
// before it.
type failingMarshaler struct{}

var errMarshal = errors.New("marshal fails")

func (failingMarshaler) MarshalJSON() ([]byte, error) { return nil, errMarshal }

// TestDumpsTypedWithWipesScratch: Encrypted.DumpsTypedWith (and
// JSONPlus's and MsgPack's DumpsTyped, which copy out) encode the
// plaintext in a buffer of the scratch pool. When the encoding failed
// after writing a prefix, the pooled buffer was dropped unwiped (the
// failed call's nil result replaced it before the deferred wipe), and when
// the encoding outgrew it, the pooled buffer (the first bytes of the
// plaintext) was dropped unwiped too: plaintext left in the heap for
// whoever reuses the memory. Here a buffer filled with a marker is put in
// the pool before each call; after the call, no plaintext may be in it.
// sync.Pool does not promise to give back what was put (the race detector
// drops a quarter of the puts), so each case retries until the call took
// the marked buffer.
func TestDumpsTypedWithWipesScratch(t *testing.T) {
	e := encrypted(t, keyring(t, testKey))
	em, err := NewEncrypted(MsgPack{}, keyring(t, testKey))
	if err != nil {
		t.Fatal(err)
	}
	dumps := map[string]func(any) error{
		"Encrypted":        func(v any) error { _, _, err := e.DumpsTypedWith(v, []byte("aad")); return err },
		"EncryptedMsgPack": func(v any) error { _, _, err := em.DumpsTypedWith(v, []byte("aad")); return err },
		"JSONPlus":         func(v any) error { _, _, err := JSONPlus{}.DumpsTyped(v); return err },
		"MsgPack":          func(v any) error { _, _, err := MsgPack{}.DumpsTyped(v); return err },
	}
	secret := "SECRET-" + strings.Repeat("plaintext ", 20)
	long := "SECRET-" + strings.Repeat("plaintext ", 400) // outgrows the pooled buffer
	for _, tc := range []struct {
		name    string
		v       any
		wantErr bool
	}{
		{"encoding fails after a prefix", map[string]any{"a": secret, "z": failingMarshaler{}}, true},
		{"encoding outgrows the buffer, then fails", map[string]any{"a": long, "z": failingMarshaler{}}, true},
		{"invalid UTF-8 after a prefix", map[string]any{"a": secret, "z": "\xff"}, true},
		{"encoding outgrows the buffer, then invalid UTF-8", map[string]any{"a": long, "z": "\xff"}, true},
		{"encoding outgrows the buffer", map[string]any{"a": long}, false},
		{"encoding fits", map[string]any{"a": secret}, false},
	} {
		for name, dump := range dumps {
			if strings.Contains(name, "MsgPack") && strings.Contains(tc.name, "fails") {
				continue // msgpack does not call MarshalJSON
			}
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				for try := 0; ; try++ {
					if try == 100 {
						t.Skip("the pool never gave back the marked buffer")
					}
					all := bytes.Repeat([]byte{0xAA}, 1024) // the pooled buffer's memory
					buf := all[:0]
					bp := &buf
					for range 64 { // empty the pool, so that the next Get is ours
						scratch.Get()
					}
					scratch.Put(bp)
					err := dump(tc.v)
					if tc.wantErr != (err != nil) {
						t.Fatalf("err = %v", err)
					}
					if bytes.Equal(all, bytes.Repeat([]byte{0xAA}, len(all))) {
						continue // another buffer was used
					}
					if i := bytes.Index(all, []byte("SECRET")); i >= 0 {
						t.Fatalf("the pooled buffer still holds plaintext: %q", all[i:min(len(all), i+40)])
					}
					if bytes.Contains(all, []byte("plaintext")) || bytes.Contains(all, []byte(`"a"`)) {
						t.Fatalf("the pooled buffer still holds plaintext: %q", all[:80])
					}
					return
				}
			})
		}
	}
}

// TestCheckValueAsDumpsTyped: CheckValue refuses what DumpsTyped refuses,
// with the same error, and accepts what it accepts, for the encrypting
// serializer (checked by its inner codec alone) and the plain codecs.
func TestCheckValueAsDumpsTyped(t *testing.T) {
	enc := encrypted(t, keyring(t, testKey))
	encMsgPack, err := NewEncrypted(MsgPack{}, keyring(t, testKey))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []Serializer{enc, encMsgPack, JSONPlus{}, MsgPack{}} {
		for _, v := range []any{
			nil, "ok", []byte("raw"), map[string]any{"a": []any{int64(1), 2.5, "x"}},
			map[string]any{"bad": "\xff"}, map[string]any{"m": failingMarshaler{}},
			make(chan int), map[string]any{"n": math.Inf(1)},
		} {
			_, _, want := s.DumpsTyped(v)
			got := CheckValue(s, v)
			if (got == nil) != (want == nil) || got != nil && got.Error() != want.Error() {
				t.Errorf("%T %T: CheckValue = %v, DumpsTyped = %v", s, v, got, want)
			}
		}
	}
}
