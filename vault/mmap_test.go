package vault

import (
	"context"
	"database/sql"
	"testing"

	"github.com/memvault/memvault/internal/sqlitedb"
)

// TestSQLiteVaultMapsNothing: a vault's saver and store share one SQLite
// file, and the first Open of a file decides for both whether SQLite maps
// it. The store reads without a map (from a cold page cache a fault in
// the map read megabytes ahead of a search's scattered pages: 112 against
// 44 MB for the first search at 100 000 × 1 536); the saver, opened first,
// used to keep its 64 MiB map for both.
func TestSQLiteVaultMapsNothing(t *testing.T) {
	ctx := context.Background()
	c := s23Config(t.TempDir())
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	// The same file opened again shares the vault's connections.
	db, err := sqlitedb.Open(c.DBPath, sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for name, p := range map[string]*sql.DB{"writer": db.Writer(), "reader": db.Reader()} {
		var n int64
		if err := p.QueryRowContext(ctx, `PRAGMA mmap_size`).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s: mmap_size %d (%v), want 0", name, n, err)
		}
	}
}
