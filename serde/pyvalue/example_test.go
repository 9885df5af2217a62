package pyvalue_test

import (
	"errors"
	"fmt"

	"github.com/memvault/memvault/serde/pyvalue"
)

// A UUID read from a Python checkpoint prints as people write it, and
// ParseUUID accepts every form Python's uuid.UUID does.
func ExampleParseUUID() {
	u, err := pyvalue.ParseUUID("{1EF4F797-8335-6428-8001-8A1503F9B875}")
	fmt.Println(u, err)
	fmt.Println(u.Hex())
	_, err = pyvalue.ParseUUID("1ef4f797")
	fmt.Println(errors.Is(err, pyvalue.ErrMalformed))
	// Output:
	// 1ef4f797-8335-6428-8001-8a1503f9b875 <nil>
	// 1ef4f7978335642880018a1503f9b875
	// true
}
