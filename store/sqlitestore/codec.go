package sqlitestore

import (
	"encoding/binary"
	"math"
)

// encodeVector is the embedding column: little-endian float32s.
func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// decodeVector fills dst (resized to fit) from an embedding column and
// reports false for a column that is not a whole number of float32s.
func decodeVector(dst []float32, b []byte) ([]float32, bool) {
	if len(b)%4 != 0 {
		return dst, false
	}
	n := len(b) / 4
	if cap(dst) < n {
		dst = make([]float32, n)
	}
	dst = dst[:n]
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return dst, true
}
