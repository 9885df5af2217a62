package filtering_test

import (
	"fmt"

	"github.com/memvault/memvault/store/internal/filtering"
)

// A filter is compiled once and matched against item values; numbers
// compare as numbers, whatever their Go type.
func Example() {
	f, err := filtering.CompileFilter(map[string]any{"kind": "note", "stars": map[string]any{"$gte": 4}})
	if err != nil {
		panic(err)
	}
	fmt.Println(f.Match(map[string]any{"kind": "note", "stars": 4.5}))
	fmt.Println(f.Match(map[string]any{"kind": "note", "stars": int64(3)}))
	_, err = filtering.CompileFilter(map[string]any{"stars": map[string]any{"$near": 1}})
	fmt.Println(err != nil)
	// Output:
	// true
	// false
	// true
}
