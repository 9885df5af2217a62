package memkeys_test

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/memkeys"
)

func ExampleNew() {
	ctx := context.Background()
	tb := memkeys.New()
	_ = tb.Insert(ctx, keys.WrappedKey{Subject: "carol", Version: 1, ID: "00112233aabbccdd", KEK: "env:test", Wrapped: []byte{1}})
	ks, _ := tb.Keys(ctx, "carol")
	fmt.Println(len(ks), ks[0].KEK)
	// Output: 1 env:test
}
