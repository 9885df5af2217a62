package audit_test

import (
	"bytes"
	"context"
	"errors"
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

// An anchor kept outside the database catches a trail cut back, which the
// chain alone cannot tell from a trail that ended there.
func ExampleTrail_Anchor() {
	ctx := context.Background()
	table := audit.NewMemoryTable()
	trail, _ := audit.NewTrail(table, audit.Options{
		Key:        bytes.Repeat([]byte{1}, 32),        // keys.DeriveAuditKey(master)
		DatabaseID: "6f1e0c8a2b7d4e3f9a0b1c2d3e4f5a6b", // audit/sqlite.DatabaseID(ctx, dataFile)
	})
	_ = trail.Log(ctx, audit.OpItemRead, "users.carol/diet", "carol", "")
	anchor, _ := trail.Anchor(ctx) // `memvault audit anchor --out FILE`
	fmt.Println("anchored record", anchor.Seq)

	table.Tamper(func(rs []audit.Record) []audit.Record { return rs[:1] })
	n, err := trail.Verify(ctx)
	fmt.Println(n, err)
	_, err = trail.VerifyAnchors(ctx, []audit.Anchor{anchor})
	fmt.Println(errors.Is(err, audit.ErrTampered))
	// Output:
	// anchored record 2
	// 1 <nil>
	// true
}
