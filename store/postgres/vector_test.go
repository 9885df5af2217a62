package postgres

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestVectorText(t *testing.T) {
	for _, tc := range []struct {
		in   []float32
		want string
	}{
		{nil, "[]"},
		{[]float32{1, -2.5, 0}, "[1,-2.5,0]"},
		{[]float32{0.1, 1e-7, 3.4028235e38}, "[0.1,1e-07,3.4028235e+38]"},
	} {
		if got := vectorText(tc.in); got != tc.want {
			t.Errorf("vectorText(%v) = %s, want %s", tc.in, got, tc.want)
		}
	}
	// Every float32 survives the text form exactly.
	v := []float32{math.SmallestNonzeroFloat32, math.MaxFloat32, -0.333333343, 16777217}
	parts := strings.Split(strings.Trim(vectorText(v), "[]"), ",")
	for i, p := range parts {
		f, err := strconv.ParseFloat(p, 32)
		if err != nil || float32(f) != v[i] {
			t.Errorf("%s reads back as %v, want %v", p, f, v[i])
		}
	}
}

// BenchmarkVectorText measures the cost of sending vectors as text (what
// lets the store use any pool without registering pgvector's types),
// against pgvector's binary format (4 bytes a dimension) as the baseline.
func BenchmarkVectorText(b *testing.B) {
	for _, dims := range []int{64, 1536} {
		v := make([]float32, dims)
		for i := range v {
			v[i] = float32(math.Sin(float64(i))) / 7
		}
		b.Run(strconv.Itoa(dims)+"/text", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(4 * dims))
			for b.Loop() {
				_ = vectorText(v)
			}
		})
		b.Run(strconv.Itoa(dims)+"/binary", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(4 * dims))
			for b.Loop() {
				buf := make([]byte, 4+4*len(v))
				binary.BigEndian.PutUint16(buf, uint16(len(v)))
				for i, f := range v {
					binary.BigEndian.PutUint32(buf[4+4*i:], math.Float32bits(f))
				}
				_ = buf
			}
		})
	}
}
