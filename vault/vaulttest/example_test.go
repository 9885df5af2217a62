package vaulttest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/memvault/memvault/vault/vaulttest"
)

// CheckStoreOnlyKey on the built-in SQLite backend: a file holding only
// sealed memories is refused when opened without its key. A backend
// registered from another module runs the same check in its tests, with
// its own MEMVAULT_DSN (StoreOnlyKeyCheck).
func ExampleCheckStoreOnlyKey() {
	dir, err := os.MkdirTemp("", "vaulttest")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	err = vaulttest.CheckStoreOnlyKey(context.Background(), map[string]string{
		"MEMVAULT_DB": filepath.Join(dir, "memvault.db"),
	})
	fmt.Println("kept:", err == nil)
	// Output: kept: true
}
