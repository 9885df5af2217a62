package testkeys_test

import (
	"fmt"
	"testing"

	"github.com/memvault/memvault/memvaulttest/testkeys"
)

// Tests seal with the fixed test key.
func Example() {
	e := testkeys.Encrypting(&testing.T{})
	typ, data, err := e.DumpsTyped(map[string]any{"card": "4242"})
	fmt.Println(typ, len(data) > 0, err)
	// Output: json+mvgcm true <nil>
}
