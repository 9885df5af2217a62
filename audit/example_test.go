package audit_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/memvault/memvault/audit"
)

// Who did what is chained record to record; Verify finds any edit.
func Example() {
	ctx := audit.WithPrincipal(context.Background(), "dr.smith")
	table := audit.NewMemoryTable()                           // audit/sqlite or audit/postgres in production
	trail, _ := audit.New(table, bytes.Repeat([]byte{1}, 32)) // keys.DeriveAuditKey(master)
	_ = trail.Log(ctx, audit.OpCheckpointRead, "carol:visit-1", "carol", "")
	_ = trail.Log(ctx, audit.OpSubjectErase, "carol", "carol", "")
	n, err := trail.Verify(ctx)
	fmt.Println(n, err)

	table.Tamper(func(rs []audit.Record) []audit.Record { rs[0].Principal = "nobody"; return rs })
	_, err = trail.Verify(ctx)
	fmt.Println(err)
	// Output:
	// 2 <nil>
	// audit: the trail was tampered with: record 1 does not match its MAC
}
