package redisstore

import (
	"errors"
	"slices"
	"testing"

	"github.com/memvault/memvault/store"
)

// FuzzDecoders feeds arbitrary bytes, as a damaged or foreign hash field
// would hold them, to the decoders of stored fields: the vectors field,
// a row header, a row id and a vector set element. Each returns a value
// or an error wrapping ErrRecord (false for the splitters), never
// panics; and encoded vectors decode to the same vectors.
func FuzzDecoders(f *testing.F) {
	f.Add(encodeVectors([]store.Vector{{Field: "text", Norm: 1, Vec: []float32{0.5, -1}}}), "ns\x00k", "1 0 1")
	f.Add([]byte{0xff, 0xff, 0xff, 0xff}, "\x00", "1 2 3")
	f.Add([]byte{1, 0, 0, 0, 0xff, 0xff}, "a.b\x00", " 0 0")
	f.Fuzz(func(t *testing.T, b []byte, id, meta string) {
		vs, err := decodeVectors(b)
		if err != nil && !errors.Is(err, ErrRecord) {
			t.Fatalf("decodeVectors: %v does not wrap ErrRecord", err)
		}
		if err == nil {
			again, err := decodeVectors(encodeVectors(vs))
			if err != nil || len(again) != len(vs) {
				t.Fatalf("decode(encode(%v)): %v, %v", vs, again, err)
			}
			for i := range vs {
				if again[i].Field != vs[i].Field || len(again[i].Vec) != len(vs[i].Vec) ||
					!slices.EqualFunc(again[i].Vec, vs[i].Vec, func(a, b float32) bool { return a == b || (a != a && b != b) }) {
					t.Fatalf("vector %d: %v, want %v", i, again[i], vs[i])
				}
			}
		}
		if _, err := parseMeta(id, meta); err != nil && !errors.Is(err, ErrRecord) {
			t.Fatalf("parseMeta: %v does not wrap ErrRecord", err)
		}
		_, _ = splitID(id)
		_, _, _ = splitElement(id)
	})
}
