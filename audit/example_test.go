package audit_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/sqliteaudit"
)

// Who did what is chained record to record; Verify finds any edit, here
// one made with SQL by whoever can write the trail's file.
func Example() {
	ctx := audit.WithPrincipal(context.Background(), "dr.smith")
	dir, _ := os.MkdirTemp("", "audit")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "audit.db")
	table, _ := sqliteaudit.Open(ctx, path) // or audit/pgaudit; audit.NewMemoryTable in memory
	defer table.Close()
	trail, _ := audit.New(table, bytes.Repeat([]byte{1}, 32)) // keys.DeriveAuditKey(master)
	_ = trail.Log(ctx, audit.OpCheckpointRead, "carol:visit-1", "carol", "")
	_ = trail.Log(ctx, audit.OpSubjectErase, "carol", "carol", "")
	n, err := trail.Verify(ctx)
	fmt.Println(n, err)

	db, _ := sql.Open("sqlite", path)
	defer db.Close()
	_, _ = db.Exec(`UPDATE memvault_audit SET principal = 'nobody' WHERE seq = 1`)
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
	dir, _ := os.MkdirTemp("", "audit")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "audit.db")
	table, _ := sqliteaudit.Open(ctx, path)
	defer table.Close()
	trail, _ := audit.NewTrail(table, audit.Options{
		Key:        bytes.Repeat([]byte{1}, 32),        // keys.DeriveAuditKey(master)
		DatabaseID: "6f1e0c8a2b7d4e3f9a0b1c2d3e4f5a6b", // audit/sqliteaudit.DatabaseID(ctx, dataFile)
	})
	_ = trail.Log(ctx, audit.OpItemRead, "users.carol/diet", "carol", "")
	anchor, _ := trail.Anchor(ctx) // `memvault audit anchor --out FILE`
	fmt.Println("anchored record", anchor.Seq)

	db, _ := sql.Open("sqlite", path)
	defer db.Close()
	_, _ = db.Exec(`DELETE FROM memvault_audit WHERE seq > 1`)
	n, err := trail.Verify(ctx)
	fmt.Println(n, err)
	_, err = trail.VerifyAnchors(ctx, []audit.Anchor{anchor})
	fmt.Println(errors.Is(err, audit.ErrTampered))
	// Output:
	// anchored record 2
	// 1 <nil>
	// true
}
