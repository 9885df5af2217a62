package serde

import (
	"bytes"
	"math/big"
	"strings"
	"testing"

	"github.com/memvault/memvault/serde/pyvalue"
)

// growValues make an encoder's buffer grow every way it can: a plain
// append, a string that AppendString escapes to six times its length, a
// float, a big integer, a map with integer keys (encoded apart first) and
// a DeltaSnapshot (msgpack: an ext encoded apart).
func growValues() []any {
	huge := new(big.Int).Lsh(big.NewInt(7), 4000)
	return []any{
		"SECRET-short",
		strings.Repeat("\x01", 300) + "SECRET-escaped",
		-1.2345678901234567e-308,
		huge,
		map[string]any{"SECRET-key": strings.Repeat("SECRET-value ", 100)},
		map[int]string{1: "SECRET-one", 2: strings.Repeat("SECRET-two ", 50)},
		pyvalue.DeltaSnapshot{Value: strings.Repeat("SECRET-delta ", 200)},
		[]any{int64(1), "SECRET-" + strings.Repeat("é\u2028\"", 400)},
	}
}

// TestEncodersWipeOutgrownArrays: the JSON and msgpack encoders' buffers
// hold plaintext; an array a buffer outgrows is zeroed when it is left.
// Each value is encoded after the last, and every array the buffer has
// left, the first one included, must be all zeros. Before, only the
// pooled first array was wiped (by the caller, wipeEncoded), and the
// arrays in between went to the garbage collector holding the text.
func TestEncodersWipeOutgrownArrays(t *testing.T) {
	type encoder struct {
		buf    func() []byte
		encode func(any) error
	}
	var je jsonEncoder
	var me mpEncoder
	encoders := map[string]encoder{
		"json":    {func() []byte { return je.b }, je.encode},
		"msgpack": {func() []byte { return me.b }, me.encode},
	}
	je.b = make([]byte, 0, 8)
	me.b = make([]byte, 0, 8)
	for name, enc := range encoders {
		t.Run(name, func(t *testing.T) {
			first := enc.buf()
			left := [][]byte{first[:cap(first)]} // every array the buffer was in, by its full capacity
			for i, v := range growValues() {
				if name == "msgpack" {
					if _, ok := v.(*big.Int); ok {
						continue // beyond 64 bits: msgpack refuses it
					}
				}
				if err := enc.encode(v); err != nil {
					t.Fatalf("value %d: %v", i, err)
				}
				b := enc.buf()
				if &left[len(left)-1][0] != &b[:1][0] {
					left = append(left, b[:cap(b)])
				}
				for j, old := range left[:len(left)-1] {
					if k := bytes.IndexFunc(old, func(r rune) bool { return r != 0 }); k >= 0 {
						t.Fatalf("after value %d: array %d of %d (cap %d) still holds %q", i, j, len(left)-1, cap(old), old[k:min(len(old), k+24)])
					}
				}
			}
			if len(left) < 4 {
				t.Fatalf("the buffer grew %d times; the test means it to grow more", len(left)-1)
			}
			if !bytes.Contains(enc.buf(), []byte("SECRET-delta")) {
				t.Fatal("the encoding lost a value")
			}
		})
	}
}

// TestEncodeStringGrowsOnce: a string the buffer has no room for grows it
// once, by hand (reserve), not inside AppendString: an array AppendString
// grew through and left would be out of reach of the wipe. Counted in
// allocations (two: the buffer, its one growth).
func TestEncodeStringGrowsOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations are counted without the race detector, which allocates on its own")
	}
	s := strings.Repeat("\x01", 4000) // 24000 bytes escaped
	allocs := testing.AllocsPerRun(20, func() {
		e := jsonEncoder{b: make([]byte, 0, 16)}
		e.appendString(s)
		if len(e.b) != 24002 {
			t.Fatalf("%d bytes", len(e.b))
		}
	})
	if allocs != 2 {
		t.Errorf("%v allocations, want 2 (the buffer and one growth)", allocs)
	}
}
