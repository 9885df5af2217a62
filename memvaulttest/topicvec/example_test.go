package topicvec_test

import (
	"fmt"

	"github.com/memvault/memvault/memvaulttest/topicvec"
)

// A set names its vectors by their text, as an embedder: "v<i>" is item i.
func Example() {
	s := topicvec.New(1000, 256, 4)
	dot := func(a, b []float32) (d float32) {
		for i := range a {
			d += a[i] * b[i]
		}
		return d
	}
	fmt.Println(s.Name(), len(s.Item(0)), dot(s.Item(0), s.Item(0)) > 0.999)
	// Output: topics:1000x256x4 256 true
}
