package keyaccess_test

import (
	"fmt"

	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/internal/keyaccess"
)

// memvault's ciphers read a key's bytes with a Token; nothing outside the
// module can make one.
func Example() {
	k, err := crypto.ParseKey("0123456789abcdef")
	if err != nil {
		panic(err)
	}
	fmt.Println(len(k.Material(keyaccess.Token{})))
	// Output: 16
}
