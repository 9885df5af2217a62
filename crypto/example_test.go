package crypto_test

import (
	"errors"
	"fmt"

	"github.com/memvault/memvault/crypto"
)

func Example() {
	// As LangGraph reads LANGGRAPH_AES_KEY: raw bytes, 16/24/32 long.
	env := map[string]string{
		crypto.EnvKey:         "new-key-0123456789abcdef01234567",
		crypto.EnvPreviousKey: "old-key-16-bytes",
	}
	ring, err := crypto.KeyringFromLookup(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		fmt.Println(err)
		return
	}
	c, _ := crypto.NewEnvelope(ring)
	ct, _ := c.Encrypt([]byte("hello"), []byte("thread-1"))
	pt, _ := c.Decrypt(ct, []byte("thread-1"))
	fmt.Printf("%s, %d bytes of overhead\n", pt, len(ct)-len(pt))

	_, err = c.Decrypt(ct, []byte("thread-2"))
	fmt.Println(errors.Is(err, crypto.ErrDecrypt))

	_, err = crypto.ParseKey("too short")
	fmt.Println(err)
	// Output:
	// hello, 69 bytes of overhead
	// true
	// crypto: key of 9 bytes: LANGGRAPH_AES_KEY must be 16, 24, or 32 bytes long.
}

func ExampleAES() {
	ring, _ := crypto.KeyringFromLookup(func(string) (string, bool) { return "0123456789abcdef0123456789abcdef", true })
	// Written with AES-GCM and a 16-byte nonce: Python reads it with
	// EncryptedSerializer.from_pycryptodome_aes(mode=AES.MODE_GCM).
	c, _ := crypto.NewAES(ring, crypto.ModeGCM)
	ct, _ := c.Encrypt([]byte{0x81, 0xa1, 0x61, 0x01}, nil)
	pt, _ := c.Decrypt(ct, nil)
	fmt.Printf("%s %d %x\n", c.Name(), len(ct), pt)
	// Output: aes 36 81a16101
}
