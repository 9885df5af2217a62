package aead_test

import (
	"errors"
	"fmt"

	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/internal/aead"
)

// An envelope opens only with the associated data it was sealed with.
func Example() {
	ring, _ := crypto.KeyringFromLookup(func(string) (string, bool) { return "new-key-0123456789abcdef01234567", true })
	c, _ := aead.NewEnvelope(ring)
	ct, _ := c.Encrypt([]byte("hello"), []byte("thread-1"))
	pt, _ := c.Decrypt(ct, []byte("thread-1"))
	fmt.Printf("%s, %d bytes of overhead\n", pt, len(ct)-len(pt))

	_, err := c.Decrypt(ct, []byte("thread-2"))
	fmt.Println(errors.Is(err, crypto.ErrDecrypt))
	// Output:
	// hello, 69 bytes of overhead
	// true
}

func ExampleAES() {
	ring, _ := crypto.KeyringFromLookup(func(string) (string, bool) { return "0123456789abcdef0123456789abcdef", true })
	// Written with AES-GCM and a 16-byte nonce: Python reads it with
	// EncryptedSerializer.from_pycryptodome_aes(mode=AES.MODE_GCM).
	c, _ := aead.NewAES(ring, crypto.ModeGCM)
	ct, _ := c.Encrypt([]byte{0x81, 0xa1, 0x61, 0x01}, nil)
	pt, _ := c.Decrypt(ct, nil)
	fmt.Printf("%s %d %x\n", c.Name(), len(ct), pt)
	// Output: aes 36 81a16101
}
