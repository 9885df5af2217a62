package serde

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestDumpsTypedOwnsItsBytes: JSONPlus and MsgPack encode in a reused
// buffer (scratch) and return a copy: a payload is not changed by later
// encodings, by a failed one, nor by encrypting with the same pool, and
// is exactly what a fresh encoding gives.
func TestDumpsTypedOwnsItsBytes(t *testing.T) {
	long := strings.Repeat("lorem ipsum ", 200) // grows past the pool's 512 bytes
	for _, s := range []Serializer{JSONPlus{}, MsgPack{}} {
		_, first, err := s.DumpsTyped(map[string]any{"a": "first", "n": int64(1)})
		if err != nil {
			t.Fatal(err)
		}
		want := bytes.Clone(first)
		for _, v := range []any{map[string]any{"b": long}, "x", []any{int64(2), "yy"}} {
			if _, _, err := s.DumpsTyped(v); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := s.DumpsTyped(map[string]any{"z": "ok", "bad": "\xff"}); !errors.Is(err, ErrUnsupportedValue) {
			t.Fatalf("%T: invalid UTF-8: err = %v", s, err)
		}
		if !bytes.Equal(first, want) {
			t.Fatalf("%T: a payload changed after later encodings: %q, was %q", s, first, want)
		}
		_, big, err := s.DumpsTyped(long)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.DumpsTyped("short"); err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(big, []byte(long)) {
			t.Fatalf("%T: a long payload changed after a later encoding", s)
		}
		// Empty bytes: a non-nil empty payload.
		if typ, data, err := s.DumpsTyped([]byte{}); err != nil || data == nil || len(data) != 0 || typ != TypeBytes && typ != TypeNull {
			t.Fatalf("%T: empty bytes: %q %v %v", s, typ, data, err)
		}
	}
}
