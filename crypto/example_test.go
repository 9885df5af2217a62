package crypto_test

import (
	"fmt"

	"github.com/memvault/memvault/crypto"
)

func Example() {
	// As LangGraph reads LANGGRAPH_AES_KEY: raw bytes, 16/24/32 long; the
	// previous keys (comma separated) still decrypt during a rotation.
	env := map[string]string{
		crypto.EnvKey:         "new-key-0123456789abcdef01234567",
		crypto.EnvPreviousKey: "old-key-16-bytes",
	}
	ring, err := crypto.KeyringFromLookup(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		fmt.Println(err)
		return
	}
	keys := ring.Keys()
	fmt.Println(len(keys), ring.IsPrimary(keys[0].ID()), ring.IsPrimary(keys[1].ID()))
	// A key prints as its id, never its bytes.
	fmt.Println(keys[1] == ring.Primary(), fmt.Sprint(keys[0]) == "key:"+keys[0].ID().String())

	_, err = crypto.ParseKey("too short")
	fmt.Println(err)
	// Output:
	// 2 true false
	// false true
	// crypto: key of 9 bytes: LANGGRAPH_AES_KEY must be 16, 24, or 32 bytes long.
}
