package binding_test

import (
	"errors"
	"fmt"

	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/serde"
)

// Example seals a channel value where it lives and shows that it opens
// there only, until Move rebinds it.
func Example() {
	key, _ := crypto.ParseRawKey("0123456789abcdef0123456789abcdef")
	ring, _ := crypto.NewKeyring(key)
	enc, _ := serde.NewEncrypted(nil, ring)
	c := binding.New(enc)

	here := binding.Blob{Thread: "t-1", Channel: "messages", Version: "1"}
	there := binding.Blob{Thread: "t-2", Channel: "messages", Version: "1"}
	typ, data, _ := c.Seal(here, []any{"hello"})

	v, _ := c.Open(here, typ, data)
	fmt.Println(v)
	_, err := c.Open(there, typ, data)
	fmt.Println(errors.Is(err, serde.ErrDecrypt))
	typ, data, _ = c.Move(here, there, typ, data)
	v, _ = c.Open(there, typ, data)
	fmt.Println(v)
	// Output:
	// [hello]
	// true
	// [hello]
}
