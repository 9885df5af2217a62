package binding_test

import (
	"context"
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
	typ, data, _ := c.Seal(context.Background(), here, []any{"hello"})

	v, _ := c.Open(context.Background(), here, typ, data)
	fmt.Println(v)
	_, err := c.Open(context.Background(), there, typ, data)
	fmt.Println(errors.Is(err, serde.ErrDecrypt))
	typ, data, _ = c.Move(context.Background(), here, there, typ, data)
	v, _ = c.Open(context.Background(), there, typ, data)
	fmt.Println(v)
	// Output:
	// [hello]
	// true
	// [hello]
}
