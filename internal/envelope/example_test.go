package envelope_test

import (
	"fmt"

	"github.com/memvault/memvault/internal/envelope"
)

// An encrypted value is kept in a JSON column as an envelope; a plain JSON
// object is told apart from one.
func Example() {
	raw := envelope.Encode("json+mvgcm", []byte{1, 2, 3})
	fmt.Println(string(raw))
	tag, data, ok, err := envelope.Parse(raw)
	fmt.Println(tag, data, ok, err)
	_, _, ok, err = envelope.Parse([]byte(`{"name": "Ada"}`))
	fmt.Println(ok, err)
	// Output:
	// {"__memvault_enc__":1,"t":"json+mvgcm","d":"AQID"}
	// json+mvgcm [1 2 3] true <nil>
	// false <nil>
}
