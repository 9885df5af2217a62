package audittest_test

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/audittest"
)

// The kill -9 suites' trail, on the memory table: what a killed writer
// appended verifies under the suite's key; the same records under another
// key do not.
func ExampleKillTrail() {
	table := audit.NewMemoryTable()
	tr, err := audittest.KillTrail(table)
	if err != nil {
		panic(err)
	}
	ctx := audit.WithPrincipal(context.Background(), "example")
	for _, thread := range []string{"thread-1", "thread-2"} {
		if err := tr.Log(ctx, audit.OpCheckpointWrite, thread, "", ""); err != nil {
			panic(err)
		}
	}
	n, err := tr.Verify(ctx)
	fmt.Println(n, err)

	other, err := audit.NewTrail(table, audit.Options{Key: make([]byte, 32), DatabaseID: "another"})
	if err != nil {
		panic(err)
	}
	_, err = other.Verify(ctx)
	fmt.Println(err != nil)
	// Output:
	// 2 <nil>
	// true
}
