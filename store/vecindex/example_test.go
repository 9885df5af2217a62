package vecindex_test

import (
	"bytes"
	"fmt"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/vecindex"
)

// A vector's code keeps one sign bit per dimension of the vector, rotated
// by a fixed rotation and taken around the codes' centre, after a header
// of norms: a vector and its double share the bits, a vector and its
// opposite do not. The ranking of scored items is total: best score, then
// newest, then namespace and key.
func ExampleEncodeCode() {
	v := []float32{1, -1, 2, -3, 5, -1, 2, -4}
	double := make([]float32, len(v))
	opposite := make([]float32, len(v))
	for i, x := range v {
		double[i], opposite[i] = 2*x, -x
	}
	bits := func(code []byte) []byte { return code[len(code)-8:] } // 8 dimensions: one word
	a, b, c := vecindex.EncodeCode(v, nil), vecindex.EncodeCode(double, nil), vecindex.EncodeCode(opposite, nil)
	fmt.Println(bytes.Equal(bits(a), bits(b)), bytes.Equal(bits(a), bits(c)))

	x := vecindex.Scored{Key: store.RowKey{NS: "a", Key: "x"}, Score: 0.9, Updated: 2}
	y := vecindex.Scored{Key: store.RowKey{NS: "a", Key: "y"}, Score: 0.9, Updated: 1}
	fmt.Println(vecindex.CompareScored(x, y) < 0)
	// Output:
	// true false
	// true
}
