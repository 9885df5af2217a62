package jsonvaluetest_test

import (
	"fmt"

	"github.com/memvault/memvault/jsonvalue"
	"github.com/memvault/memvault/jsonvalue/jsonvaluetest"
)

// Example checks the model itself against the cases, as a backend's
// round trip is checked in the conformance suites.
func Example() {
	failed := 0
	for _, c := range jsonvaluetest.Cases() {
		text, err := jsonvalue.Marshal(c.In)
		if err != nil {
			failed++
			continue
		}
		back, err := jsonvalue.Unmarshal(text)
		if err != nil || jsonvalue.Diff(c.Want, back) != "" {
			failed++
		}
	}
	fmt.Println(len(jsonvaluetest.Cases()) > 50, failed)
	// Output: true 0
}
