package sqlitekeys_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/sqlitekeys"
)

// The key table in a file of its own, apart from the data.
func ExampleOpen() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "keys")
	defer os.RemoveAll(dir)
	tb, err := sqlitekeys.Open(ctx, filepath.Join(dir, "keys.db"))
	if err != nil {
		panic(err)
	}
	defer tb.Close()
	_ = tb.Insert(ctx, keys.WrappedKey{Subject: "carol", Version: 1, ID: "00112233aabbccdd", KEK: "env:test", Wrapped: []byte{1, 2, 3}})
	gone, _ := tb.Destroy(ctx, "carol")
	left, _ := tb.Keys(ctx, "carol")
	fmt.Println(len(gone), gone[0].ID, len(left))
	// Output: 1 00112233aabbccdd 0
}
