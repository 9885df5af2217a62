package pgstore

import (
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
