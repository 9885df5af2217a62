package sqliteaudit_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/sqliteaudit"
)

func ExampleOpen() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "audit")
	defer os.RemoveAll(dir)
	tb, err := sqliteaudit.Open(ctx, filepath.Join(dir, "audit.db"))
	if err != nil {
		panic(err)
	}
	defer tb.Close()
	trail, _ := audit.New(tb, bytes.Repeat([]byte{1}, 32))
	_ = trail.Log(ctx, audit.OpItemRead, "users.carol/diet", "carol", "")
	n, err := trail.Verify(ctx)
	fmt.Println(n, err)
	// Output: 1 <nil>
}
