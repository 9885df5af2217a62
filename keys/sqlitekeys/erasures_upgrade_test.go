package sqlitekeys

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/internal/sqlitedb"
)

// TestErasuresCountedOnUpgrade: a key table of a build before the count
// (schema v3) that recorded two erasures counts two once opened (migration
// v5), so a backup of it from before one of them counts fewer. Before the
// migration it counted 0: vault's check of key-table backups let a backup
// from before an erasure of an earlier build through (session 23 review,
// TestReviewS23ErasureBeforeUpgradeUncounted). The count also never falls
// below the records when its row is deleted.
func TestErasuresCountedOnUpgrade(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "keys.db")
	db, err := sqlitedb.Open(path, sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, "keys", migrations[:4]); err != nil { // v0..v3: no meta, no count
		t.Fatal(err)
	}
	if _, err := db.Writer().ExecContext(ctx, `INSERT INTO memvault_erasures (subject, started_at, key_ids, trace, done)
		VALUES ('carol', '2026-01-01T00:00:00Z', '[]', x'', 1), ('dave', '2026-01-02T00:00:00Z', '[]', x'', 1)`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	tb, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if n, err := tb.Erasures(ctx); err != nil || n != 2 {
		t.Fatalf("Erasures after the upgrade = %d, %v; want the 2 recorded", n, err)
	}
	if _, err := tb.db.Writer().ExecContext(ctx, `DELETE FROM memvault_keys_meta WHERE name = 'erasures'`); err != nil {
		t.Fatal(err)
	}
	if n, err := tb.Erasures(ctx); err != nil || n != 2 {
		t.Fatalf("Erasures with the count's row deleted = %d, %v; want the 2 recorded", n, err)
	}
}
