package vaulthook_test

import (
	"fmt"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulthook"
)

// A test of another module pauses a Forget after its claim:
// vaulthook.AfterClaim(h, func(intent int64) { <-resume }) with h a
// *vault.Handle. vault installs the seam when it is linked in.
func ExampleAfterClaim() {
	var _ *vault.Handle // linking vault sets the seam
	fmt.Println(vaulthook.AfterClaim != nil)
	// Output: true
}
